"""The console's schema registry views: subjects and versions, and records decoded with their schemas."""
