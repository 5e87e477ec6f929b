"""relgraph: the Python client of relgraphd (docs/protocol.md).

    from relgraph import Client
    c = Client("127.0.0.1", 7707)
    c.follow(1, 2)
    for fan in c.iter_fans(2):
        print(fan.user, fan.ts)

``Client`` (blocking, safe to share across threads, with a pool and pipelines) and
``AsyncClient`` (asyncio) offer the same typed calls, and so do ``ClusterClient`` and
``AsyncClusterClient``, which route each to the shard of its user in a cluster; errors are ``RelgraphError`` subclasses
carrying the protocol's code. Each takes ``tls=`` (an ``ssl.SSLContext`` or a ``TlsOptions``)
to speak TLS (docs/security.md).
"""

from .aio import AsyncClient, AsyncPipeline, AsyncSubscription
from .client import Backoff, Client, Pipeline, Pool, Subscription, parse_host_port
from .cluster import AsyncClusterClient, ClusterClient
from .connection import Connection
from .errors import *  # noqa: F401,F403  (every typed error)
from .errors import CODE_NAMES, RelgraphError, error_for
from .placement import ShardInfo, ShardMap, bucket_hash, bucket_of, parse_shard_map
from .tls import TlsOptions
from .types import *  # noqa: F401,F403  (every typed result)

__version__ = "0.1.0"
