"""rates: hallucination rates per slice from the store (design-weighted human rate, the judge's
raw and PPI-corrected rates, Rogan-Gladen), trend and drift, the label budget, the release
gate, exports, OTel evaluation records and the auditor bundle with its check.

May import agreement/, labelling/, sampling/, judge/, ingest/ (the OTLP evaluation names our
own import refuses), accounts/, stats/, store/ and errors.
"""
