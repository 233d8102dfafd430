"""Topics and partitions on the controller: creation, placement, leaders and ISRs, state machines, reassignment."""
