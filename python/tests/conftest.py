# The localsqs plugin itself is loaded through its pytest11 entry point, as for any user.
pytest_plugins = ["pytester"]
