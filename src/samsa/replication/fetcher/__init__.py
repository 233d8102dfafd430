"""The follower side: replica fetchers, their decisions, and what a follower does with what they bring."""
