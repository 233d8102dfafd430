"""The metadata image: registrations, deltas, SCRAM credentials, delegation tokens."""
