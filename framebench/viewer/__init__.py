"""``framebench view``: a local results browser over run folders (Flask, served on 127.0.0.1).

``data`` holds and filters the records, ``app`` renders the pages, ``links`` builds the URLs that
the pages and report.html share.
"""
