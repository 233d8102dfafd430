"""What the broker tells about itself: metrics, the Prometheus endpoint, runtime log levels, slow-callback tracing."""
