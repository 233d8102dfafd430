"""The PySpark ``samsa`` source against the ceilings a Python data source has."""
