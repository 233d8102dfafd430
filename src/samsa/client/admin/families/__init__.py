"""The Admin client's API families, one module each, behind the Admin facade."""
