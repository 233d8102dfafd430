"""What the benchmarks share: brokers and peers by name, local clusters, fresh interpreters, the load client."""
