"""HTTP: statuses as failures, Retry-After, the service client, and the seams to the clients
(``_clients``: one module per HTTP client) and to the provider SDKs (``_providers``: one module
per SDK), each found by a registry that imports a module only once its package is seen.
"""
