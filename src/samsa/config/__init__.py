"""Typed settings with Kafka's names: broker keys, synonyms, listeners, SSL, JAAS.

The broker's key table and its resolved values, topic config synonyms, node
settings, listeners, SSL, JAAS and the Kafka-version setting type.

``ConfigKey`` and the value parsers are in ``values``; the key table, one module
per area, in ``broker_keys`` (read its docstring to add a key); ``BrokerConfig``
in ``broker_config``.  Import them from there: this package's root imports
nothing, so a client process that needs only ``ssl`` or ``jaas`` (the
``ssl.*`` and ``sasl.jaas.config`` parsers it shares with the broker) does not
load the broker's key table, and with it the storage's topic config table.
"""
