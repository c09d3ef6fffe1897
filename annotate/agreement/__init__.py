"""agreement: the documents an auditor reads: reviewers vs reviewers (reliability) and the judge
vs gold (calibration), read from the store and computed by stats/.

May import labelling/, judge/, accounts/, stats/, store/ and errors.
"""
