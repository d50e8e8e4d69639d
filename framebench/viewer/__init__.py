"""``framebench view``: a local results browser over run folders (Flask, served on 127.0.0.1).

``data`` holds and filters the records, ``app`` renders the pages; the URLs they and report.html
share are built in ``framebench.scoring.viewer_links``.
"""
