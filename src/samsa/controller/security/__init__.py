"""Who may do what, on the controller: ACLs, SCRAM credentials, delegation tokens, client quotas."""
