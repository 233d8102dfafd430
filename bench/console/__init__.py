"""What metrics and the web console cost, and the console at 10,000 partitions."""
