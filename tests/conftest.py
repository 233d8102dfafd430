pytest_plugins = ["samsa.testing"]
