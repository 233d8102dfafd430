"""The schema registry served by a broker node: ``_schemas`` replayed, a primary elected, writes fenced, HTTP."""
