"""A third party's answer mode (test only): ``--answer firstword``."""
