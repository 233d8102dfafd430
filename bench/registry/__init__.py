"""The schema registry: lookups per second beside the HTTP floor, serialize+produce of Avro records."""
