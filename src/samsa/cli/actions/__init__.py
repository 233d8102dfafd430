"""What the larger subcommands do: cluster status, reassignments, voter changes, group offset resets."""
