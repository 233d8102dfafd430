"""What consumer, streams and share groups share: request errors, member deadlines, groups kept as records, admin views.

Kafka calls these the modern groups (KIP-848's protocol, which KIP-932's share
groups and KIP-1071's streams groups reuse): members heartbeat and the
coordinator assigns.  The parts that are the same rule for every type of group
live here, so a fix reaches all of them; what differs (the request checks,
the records, the assignment) stays in each type's own package.  Share groups,
kept in memory only, use the errors and the timers; consumer and streams
groups also the record-backed state (``record_groups``) and the admin views
(``group_admin``).  Nothing here imports ``consumer``, ``streams`` or ``share``.
"""
