"""The group, transaction and share coordinators wired to their internal topics and to this broker's partitions."""
