"""canary: canary-trap suites. Copy a sample's contexts with their facts changed to fictive
values, export them for replay, import the replayed responses and score which values came back.

May import labelling/ (the gold of "neither" items), sampling/, ingest/, accounts/, stats/,
store/, traces/ and errors; nothing above it imports it but cli/ and pages/.
"""
