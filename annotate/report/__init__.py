"""report: the offline calibration report: its document, HTML/Markdown rendering and the Altair
charts (shared with the pages).

May import agreement/ and everything below it; never cli/.
"""
