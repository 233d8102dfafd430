"""Generated encoders and decoders for the compiled schemas."""
