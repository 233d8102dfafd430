"""Direct reads of tiered history: remote segments planned as Spark partitions and read from the object store on the executors."""
