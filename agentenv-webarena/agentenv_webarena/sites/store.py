"""The bundled sites' state: one in-memory SQLite database per namespace, copied from the seeded one.

Each env session browses under a namespace of its own (a request header its browser adds), so sessions
running at once never see each other's posts or orders, and resetting a task is copying the seeded
database over the namespace's (SQLite's backup API: milliseconds).  Requests without a namespace share the
``public`` one.
"""

from __future__ import annotations

import secrets
import sqlite3
from collections import OrderedDict

from .seed import (
    ADMIN_PASSWORD,
    ADMIN_USERNAME,
    FORUM_PASSWORD,
    FORUM_USERNAME,
    FORUM_USERS,
    FORUMS,
    SHIPPING_CENTS,
    SHOP_CUSTOMER_EMAIL,
    SHOP_CUSTOMER_PASSWORD,
    SeedData,
    seed_data,
)

SCHEMA = """
CREATE TABLE products (id INTEGER PRIMARY KEY, sku TEXT UNIQUE, slug TEXT UNIQUE, name TEXT, brand TEXT,
    category TEXT, price_cents INTEGER, qty INTEGER, enabled INTEGER, description TEXT);
CREATE TABLE reviews (id INTEGER PRIMARY KEY, product_id INTEGER, nickname TEXT, rating INTEGER, title TEXT,
    text TEXT, created TEXT);
CREATE TABLE customers (id INTEGER PRIMARY KEY, first TEXT, last TEXT, email TEXT, password TEXT, city TEXT,
    phone TEXT);
CREATE TABLE orders (id INTEGER PRIMARY KEY, increment TEXT UNIQUE, customer_id INTEGER, created TEXT,
    status TEXT, subtotal_cents INTEGER, shipping_cents INTEGER, total_cents INTEGER);
CREATE TABLE order_items (order_id INTEGER, product_id INTEGER, name TEXT, price_cents INTEGER, qty INTEGER);
CREATE TABLE wishlist (customer_id INTEGER, product_id INTEGER, added INTEGER, PRIMARY KEY (customer_id, product_id));
CREATE TABLE admins (username TEXT PRIMARY KEY, password TEXT);
CREATE TABLE forums (name TEXT PRIMARY KEY, description TEXT);
CREATE TABLE users (name TEXT PRIMARY KEY, password TEXT);
CREATE TABLE posts (id INTEGER PRIMARY KEY, forum TEXT, title TEXT, body TEXT, author TEXT, created TEXT,
    base_score INTEGER);
CREATE TABLE comments (id INTEGER PRIMARY KEY, post_id INTEGER, author TEXT, body TEXT, created TEXT);
CREATE TABLE votes (post_id INTEGER, user TEXT, value INTEGER, PRIMARY KEY (post_id, user));
"""

#: the namespace of requests that name none (someone browsing the sites)
PUBLIC = "public"
#: namespaces kept at most; the least recently used is dropped beyond it (a session's own is dropped when
#: it closes, so this only bounds namespaces of sessions that died without closing).  Far above the
#: sessions one server holds (each holds a browser context too), so a live session's is never dropped;
#: one takes about 0.12 MB.
MAX_NAMESPACES = 4096
#: logins kept at most (the oldest are forgotten beyond it)
MAX_LOGINS = 100_000


def build_seeded(data: SeedData) -> sqlite3.Connection:
    """A database holding the seeded data."""
    db = sqlite3.connect(":memory:", check_same_thread=False)
    db.executescript(SCHEMA)
    db.executemany(
        "INSERT INTO products VALUES (?,?,?,?,?,?,?,?,?,?)",
        [(p.id, p.sku, p.slug, p.name, p.brand, p.category, p.price_cents, p.qty, int(p.enabled), p.description)
         for p in data.products],
    )
    db.executemany(
        "INSERT INTO reviews (product_id, nickname, rating, title, text, created) VALUES (?,?,?,?,?,?)",
        [(r.product_id, r.nickname, r.rating, r.title, r.text, r.created) for r in data.reviews],
    )
    db.executemany(
        "INSERT INTO customers VALUES (?,?,?,?,?,?,?)",
        [(c.id, c.first, c.last, c.email, SHOP_CUSTOMER_PASSWORD if c.email == SHOP_CUSTOMER_EMAIL else
          secrets.token_hex(8), c.city, c.phone) for c in data.customers],
    )
    for o in data.orders:
        db.execute("INSERT INTO orders VALUES (?,?,?,?,?,?,?,?)",
                   (o.id, o.increment, o.customer_id, o.created, o.status, o.subtotal_cents, SHIPPING_CENTS,
                    o.total_cents))
        db.executemany("INSERT INTO order_items VALUES (?,?,?,?,?)",
                       [(o.id, i.product_id, i.name, i.price_cents, i.qty) for i in o.items])
    db.execute("INSERT INTO admins VALUES (?, ?)", (ADMIN_USERNAME, ADMIN_PASSWORD))
    db.executemany("INSERT INTO forums VALUES (?, ?)", [(name, d) for name, (d, _) in FORUMS.items()])
    db.executemany(
        "INSERT INTO users VALUES (?, ?)",
        [(u, FORUM_PASSWORD if u == FORUM_USERNAME else secrets.token_hex(8)) for u in FORUM_USERS],
    )
    db.executemany("INSERT INTO posts VALUES (?,?,?,?,?,?,?)",
                   [(p.id, p.forum, p.title, p.body, p.author, p.created, p.score) for p in data.posts])
    db.executemany("INSERT INTO comments (post_id, author, body, created) VALUES (?,?,?,?)",
                   [(c.post_id, c.author, c.body, c.created) for c in data.comments])
    db.commit()
    return db


class Store:
    """Namespaced copies of the seeded database."""

    def __init__(self, data: SeedData | None = None) -> None:
        self.seeded = build_seeded(data or seed_data())
        self.namespaces: OrderedDict[str, sqlite3.Connection] = OrderedDict()
        #: login token -> (site, user), for the sites' session cookies
        self.logins: OrderedDict[str, tuple[str, str]] = OrderedDict()

    def db(self, namespace: str) -> sqlite3.Connection:
        """The namespace's database.  :data:`PUBLIC` (requests naming none) is made on first use; a session's
        is made only by :meth:`reset`, which the token-checked control route calls, so that requests naming
        made-up namespaces can neither pile them up nor push live sessions' out (``KeyError``)."""
        db = self.namespaces.get(namespace)
        if db is None:
            if namespace != PUBLIC:
                raise KeyError(namespace)
            return self.reset(namespace)
        self.namespaces.move_to_end(namespace)
        return db

    def reset(self, namespace: str) -> sqlite3.Connection:
        """Put the namespace back to the seeded data."""
        db = self.namespaces.get(namespace)
        if db is None:
            # autocommit: the sites' writes hold no transaction open, which the backup below would wait on
            db = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
            db.row_factory = sqlite3.Row
            self.namespaces[namespace] = db
            while len(self.namespaces) > MAX_NAMESPACES:
                _, oldest = self.namespaces.popitem(last=False)
                oldest.close()
        self.seeded.backup(db)
        self.namespaces.move_to_end(namespace)
        return db

    def drop(self, namespace: str) -> None:
        db = self.namespaces.pop(namespace, None)
        if db is not None:
            db.close()

    # --- logins (kept across namespace resets: a saved login, WebArena's storage_state, stays valid) ----
    def login(self, site: str, user: str) -> str:
        token = secrets.token_urlsafe(16)
        self.logins[token] = (site, user)
        while len(self.logins) > MAX_LOGINS:
            self.logins.popitem(last=False)
        return token

    def user_of(self, site: str, token: str | None) -> str | None:
        found = self.logins.get(token or "")
        return found[1] if found and found[0] == site else None

    def logout(self, token: str | None) -> None:
        self.logins.pop(token or "", None)
