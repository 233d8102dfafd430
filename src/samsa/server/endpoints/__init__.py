"""The broker's HTTP endpoints (console, metrics): built, secured and bound, and the console's port onto the broker."""
