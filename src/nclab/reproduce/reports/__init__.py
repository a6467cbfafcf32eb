"""The reports of ``nclab reproduce``, above the judging: report.md, report.html and report.json
(:mod:`.claims_report`, :mod:`.report_html`), what they show of a result (:mod:`.views`) and a
claim's evidence figure (:mod:`.evidence_figure`). They read the results
(:mod:`nclab.reproduce.results`); of :mod:`nclab.reproduce`, only its runner (the verb: run,
judge, write the reports) imports them (``tests/test_layout.py``)."""
