"""The metadata image: registrations, deltas, SCRAM credentials, and the image written back as records."""
