"""The broker's view of the cluster: committed metadata loaded and applied, its standing with the controller, dynamic configs, log dirs and meta.properties."""
