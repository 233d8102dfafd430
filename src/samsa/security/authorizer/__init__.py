"""Kafka's StandardAuthorizer model: ACL bindings, filters, and the decision.

Sans-I/O: the broker feeds it the ACLs of the metadata image and asks it
questions; it never reads a socket, a file or the image itself.
"""
