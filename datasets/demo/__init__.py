"""The demo datasets, installed as package data (``importlib.resources.files("framebench.demo")``)."""
