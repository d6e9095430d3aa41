"""Retail: customers, products, orders and the items on them."""

from __future__ import annotations

import datetime as dt
import random
import sqlite3

from ..families import Ask, lit, quoted
from ..spec import Attribute, Domain, Draft, Entity, Link
from ..values import Vocabulary, day, iso, lognormal, picker, unique, weighted

DDL = """
CREATE TABLE customers (
    customer_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    email TEXT,
    city TEXT NOT NULL,
    country TEXT NOT NULL,
    signup_date TEXT NOT NULL,
    loyalty_tier TEXT
);
CREATE TABLE products (
    product_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    category TEXT NOT NULL,
    brand TEXT NOT NULL,
    price REAL NOT NULL,
    stock INTEGER NOT NULL
);
CREATE TABLE orders (
    order_id INTEGER PRIMARY KEY,
    customer_id INTEGER NOT NULL REFERENCES customers (customer_id),
    order_date TEXT NOT NULL,
    status TEXT NOT NULL,
    shipped_date TEXT,
    payment_method TEXT NOT NULL
);
CREATE TABLE order_items (
    order_item_id INTEGER PRIMARY KEY,
    order_id INTEGER NOT NULL REFERENCES orders (order_id),
    product_id INTEGER NOT NULL REFERENCES products (product_id),
    quantity INTEGER NOT NULL,
    unit_price REAL NOT NULL
);
CREATE INDEX orders_customer ON orders (customer_id);
CREATE INDEX items_order ON order_items (order_id);
CREATE INDEX items_product ON order_items (product_id);
"""

#: category -> (median price, product nouns)
CATALOG = {
    "electronics": (
        89.0,
        ["Headphones", "Speaker", "Charger", "Keyboard", "Mouse", "Monitor", "Webcam", "Router"],
    ),
    "kitchen": (34.0, ["Kettle", "Blender", "Knife Set", "Frying Pan", "Toaster", "Cutting Board", "Mixer"]),
    "garden": (27.0, ["Hose", "Rake", "Planter", "Shears", "Lantern", "Bird Feeder", "Trowel"]),
    "toys": (19.0, ["Puzzle", "Robot", "Kite", "Board Game", "Train Set", "Doll House", "Yo-Yo"]),
    "sports": (42.0, ["Yoga Mat", "Dumbbell", "Tennis Racket", "Football", "Jump Rope", "Bike Helmet"]),
    "books": (14.0, ["Cookbook", "Atlas", "Novel", "Field Guide", "Sketchbook", "Journal"]),
    "beauty": (22.0, ["Face Cream", "Shampoo", "Perfume", "Hair Dryer", "Lip Balm", "Nail Kit"]),
    "office": (16.0, ["Stapler", "Desk Lamp", "Notebook", "Pen Set", "Organizer", "Whiteboard"]),
}
ADJECTIVES = [
    "Classic",
    "Compact",
    "Deluxe",
    "Eco",
    "Pro",
    "Smart",
    "Ultra",
    "Mini",
    "Premium",
    "Travel",
    "Vintage",
]
STATUSES = {"delivered": 70, "shipped": 10, "processing": 5, "cancelled": 8, "returned": 7}
PAYMENTS = {"card": 60, "paypal": 25, "bank transfer": 10, "gift card": 5}
TIERS = {"bronze": 40, "silver": 30, "gold": 20, "platinum": 10}


def populate(db: sqlite3.Connection, rng: random.Random, words: Vocabulary) -> None:
    cities = list(words.cities[:30])
    city_weights = [1 / (i + 1) for i in range(len(cities))]
    countries = {"United States": 60, "Canada": 15, "Mexico": 10, "United Kingdom": 10, "Ireland": 5}
    customers = []
    for cid in range(1, 1001):
        name = words.person(rng)
        signup = day(rng, dt.date(2018, 1, 1), dt.date(2024, 6, 30))
        customers.append(
            (
                cid,
                name,
                words.email(rng, name) if rng.random() < 0.85 else None,
                rng.choices(cities, city_weights)[0],
                weighted(rng, countries),
                iso(signup),
                weighted(rng, TIERS) if rng.random() < 0.65 else None,
            )
        )
    db.executemany("INSERT INTO customers VALUES (?, ?, ?, ?, ?, ?, ?)", customers)

    brands = unique(rng, lambda r: r.choice(words.surnames), 25)
    names = unique(
        rng,
        lambda r: (
            f"{r.choice(brands)} {r.choice(ADJECTIVES)} {r.choice(CATALOG[r.choice(list(CATALOG))][1])}"
        ),
        300,
    )
    products = []
    for pid, name in enumerate(names, start=1):
        noun = name.split(" ", 2)[2]
        category = next(c for c, (_, nouns) in CATALOG.items() if noun in nouns)
        stock = 0 if rng.random() < 0.08 else int(rng.paretovariate(1.2) * 20)
        products.append(
            (pid, name, category, name.split(" ")[0], lognormal(rng, CATALOG[category][0], 0.5), stock)
        )
    db.executemany("INSERT INTO products VALUES (?, ?, ?, ?, ?, ?)", products)

    buyer = picker(rng, customers, [0.0 if rng.random() < 0.1 else rng.paretovariate(1.5) for _ in customers])
    bought = picker(rng, products, [0.0 if rng.random() < 0.05 else rng.paretovariate(1.3) for _ in products])
    orders, items = [], []
    for oid in range(1, 4001):
        customer = buyer()[0]
        ordered = day(rng, dt.date.fromisoformat(customer[5]), dt.date(2024, 12, 31))
        status = weighted(rng, STATUSES)
        shipped = (
            None
            if status in ("processing", "cancelled")
            else iso(ordered + dt.timedelta(days=rng.randint(1, 7)))
        )
        orders.append((oid, customer[0], iso(ordered), status, shipped, weighted(rng, PAYMENTS)))
        for product in bought(min(6, 1 + int(rng.expovariate(0.9)))):
            discount = rng.choice((1.0, 1.0, 1.0, 0.9, 0.8))
            quantity = 1 if rng.random() < 0.7 else rng.randint(2, 4)
            items.append((len(items) + 1, oid, product[0], quantity, round(product[4] * discount, 2)))
    db.executemany("INSERT INTO orders VALUES (?, ?, ?, ?, ?, ?)", orders)
    db.executemany("INSERT INTO order_items VALUES (?, ?, ?, ?, ?)", items)


# --- questions of this domain -----------------------------------------------------------------------------

_ITEMS = (
    "order_items AS T1 INNER JOIN orders AS T2 ON T1.order_id = T2.order_id "
    "INNER JOIN products AS T3 ON T1.product_id = T3.product_id"
)


def category_revenue(ask: Ask) -> Draft | None:
    category = ask.pick(sorted(CATALOG))
    year = ask.pick(["2021", "2022", "2023", "2024"])
    of_category, in_year, kept = (
        f"T3.category = {lit(category)}",
        f"strftime('%Y', T2.order_date) = {lit(year)}",
        "T2.status <> 'cancelled'",
    )
    conditions = f"WHERE {of_category} AND {in_year} AND {kept}"
    revenue = f"SELECT ROUND(SUM(T1.quantity * T1.unit_price), 2) FROM {_ITEMS}"
    return Draft(
        question=f"What was the revenue from {category} products on the orders placed in {year}, leaving out "
        "cancelled orders? Revenue is quantity times unit price; round it to two decimals.",
        sql=f"{revenue} {conditions}",
        near_miss=f"SELECT ROUND(SUM(T1.quantity * T3.price), 2) FROM {_ITEMS} {conditions}",
        wrong=(f"{revenue} WHERE {of_category} AND {in_year}", f"{revenue} WHERE {of_category} AND {kept}"),
        kind="aggregate",
        difficulty="challenging",
        evidence="revenue refers to SUM(quantity * unit_price); cancelled refers to status = 'cancelled'",
        thought="Revenue needs the items (quantity, unit_price), their orders (date, status) and their products "
        "(category): a three-table join, summed.",
    )


def products_of_customer(ask: Ask) -> Draft | None:
    name = ask.pick(ask.unique_labels(ask.domain.entity("customers")))
    joins = (
        "FROM customers AS T1 INNER JOIN orders AS T2 ON T1.customer_id = T2.customer_id "
        "INNER JOIN order_items AS T3 ON T2.order_id = T3.order_id INNER JOIN products AS T4 ON T3.product_id = T4.product_id"
    )
    return Draft(
        question=f"List the names of the products the customer {quoted(name)} has ordered.",
        sql=f"SELECT DISTINCT T4.name {joins} WHERE T1.name = {lit(name)}",
        near_miss=f"SELECT DISTINCT T4.name {joins.replace('T3.product_id = T4.product_id', 'T3.order_id = T4.product_id')} "
        f"WHERE T1.name = {lit(name)}",
        kind="join",
        difficulty="challenging",
        thought="From the customer through orders and order_items to products: four tables joined on their keys.",
    )


def days_to_ship(ask: Ask) -> Draft | None:
    payment = ask.pick(sorted(PAYMENTS))
    days = "julianday(shipped_date) - julianday(order_date)"
    return Draft(
        question=f"On average, how many days passed between ordering and shipping for the orders paid by {payment}? "
        "Round to two decimals.",
        sql=f"SELECT ROUND(AVG({days}), 2) FROM orders WHERE payment_method = {lit(payment)}",
        near_miss=f"SELECT ROUND(AVG(julianday(order_date) - julianday(shipped_date)), 2) FROM orders "
        f"WHERE payment_method = {lit(payment)}",
        wrong=(f"SELECT ROUND(AVG({days}), 2) FROM orders",),
        kind="aggregate",
        difficulty="moderate",
        evidence="days between ordering and shipping refers to julianday(shipped_date) - julianday(order_date)",
        thought="julianday turns the ISO dates into day numbers; AVG skips orders never shipped (NULL).",
    )


def big_spenders(ask: Ask) -> Draft | None:
    city = ask.pick(ask.values("customers", "city"))
    joins = "customers AS T1 INNER JOIN orders AS T2 ON T1.customer_id = T2.customer_id INNER JOIN order_items AS T3 ON T2.order_id = T3.order_id"
    k = ask.rng.choice((1, 3))
    spent = "SUM(T3.quantity * T3.unit_price)"
    tail = f"FROM {joins} WHERE T1.city = {lit(city)} GROUP BY T1.customer_id ORDER BY {spent} DESC"
    return Draft(
        question=f"Which {'customer' if k == 1 else f'{k} customers'} from {city} spent the most over all "
        f"their orders (quantity times unit price)? Give {'the name' if k == 1 else 'their names'}.",
        sql=f"SELECT T1.name {tail} LIMIT {k}",
        near_miss=f"SELECT T1.name {tail.replace(' DESC', ' ASC')} LIMIT {k}",
        wrong=(f"SELECT T1.name {tail}",),
        ranking=(f"SELECT {spent} {tail}", k),
        kind="order_limit",
        difficulty="challenging",
        thought="Spending per customer is SUM(quantity * unit_price) over their order items, grouped by customer.",
    )


DOMAIN = Domain(
    name="retail",
    ddl=DDL,
    populate=populate,
    entities=(
        Entity(
            "customers",
            "customer_id",
            "customer",
            "customers",
            label="name",
            categories=(Attribute("city", "city"), Attribute("country", "country")),
            dates=(Attribute("signup_date", "sign-up date"),),
            optional=(Attribute("email", "email address"), Attribute("loyalty_tier", "loyalty tier")),
        ),
        Entity(
            "products",
            "product_id",
            "product",
            "products",
            label="name",
            numbers=(Attribute("price", "price"), Attribute("stock", "stock")),
            categories=(Attribute("category", "category"), Attribute("brand", "brand")),
        ),
        Entity(
            "orders",
            "order_id",
            "order",
            "orders",
            categories=(Attribute("status", "status"), Attribute("payment_method", "payment method")),
            dates=(Attribute("order_date", "order date"),),
            optional=(Attribute("shipped_date", "shipping date"),),
        ),
        Entity(
            "order_items",
            "order_item_id",
            "order item",
            "order items",
            numbers=(Attribute("quantity", "quantity"), Attribute("unit_price", "unit price")),
        ),
    ),
    links=(
        Link("orders", "customer_id", "customers", "customer"),
        Link("order_items", "order_id", "orders"),
        Link("order_items", "product_id", "products", "product"),
    ),
    templates=(category_revenue, products_of_customer, days_to_ship, big_spenders),
)
