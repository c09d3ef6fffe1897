"""labelling: assignment of sampled traces to reviewers, the labelling session (append-only
verdict events), adjudication, and the evidence (votes, adjudications) that agreement reads.

May import sampling/, judge/, accounts/, stats/, store/ and errors (not claims/: a sibling).
"""
