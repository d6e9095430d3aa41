"""Banking: branches, customers, their accounts and transactions, and loans."""

from __future__ import annotations

import datetime as dt
import random
import sqlite3

from ..families import Ask, lit, quoted
from ..spec import Attribute, Domain, Draft, Entity, Link
from ..values import Vocabulary, day, iso, lognormal, picker, weighted

DDL = """
CREATE TABLE branches (
    branch_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    city TEXT NOT NULL,
    opened_year INTEGER NOT NULL
);
CREATE TABLE customers (
    customer_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    birth_date TEXT NOT NULL,
    city TEXT NOT NULL,
    branch_id INTEGER NOT NULL REFERENCES branches (branch_id),
    email TEXT,
    segment TEXT NOT NULL
);
CREATE TABLE accounts (
    account_id INTEGER PRIMARY KEY,
    account_number TEXT NOT NULL,
    customer_id INTEGER NOT NULL REFERENCES customers (customer_id),
    account_type TEXT NOT NULL,
    opened_on TEXT NOT NULL,
    balance REAL NOT NULL,
    closed_on TEXT
);
CREATE TABLE transactions (
    transaction_id INTEGER PRIMARY KEY,
    account_id INTEGER NOT NULL REFERENCES accounts (account_id),
    transaction_date TEXT NOT NULL,
    amount REAL NOT NULL,
    kind TEXT NOT NULL,
    merchant TEXT
);
CREATE TABLE loans (
    loan_id INTEGER PRIMARY KEY,
    customer_id INTEGER NOT NULL REFERENCES customers (customer_id),
    amount REAL NOT NULL,
    interest_rate REAL NOT NULL,
    start_date TEXT NOT NULL,
    term_months INTEGER NOT NULL,
    status TEXT NOT NULL
);
CREATE INDEX customers_branch ON customers (branch_id);
CREATE INDEX accounts_customer ON accounts (customer_id);
CREATE INDEX transactions_account ON transactions (account_id);
CREATE INDEX loans_customer ON loans (customer_id);
"""

SEGMENTS = {"retail": 75, "premier": 15, "business": 10}
ACCOUNT_TYPES = {"checking": 50, "savings": 35, "credit": 15}
KINDS = {"card payment": 45, "deposit": 20, "withdrawal": 15, "transfer": 15, "fee": 5}
MERCHANTS = [
    "GreenGrocer",
    "FuelStop",
    "CityTransit",
    "BookNook",
    "CoffeeCorner",
    "TechHub",
    "PharmaPlus",
    "HomeGoods",
    "StreamFlix",
    "FitZone",
]
LOAN_STATUSES = {"active": 55, "repaid": 35, "defaulted": 10}


def populate(db: sqlite3.Connection, rng: random.Random, words: Vocabulary) -> None:
    cities = list(words.cities[:10])
    branches = []
    for bid in range(1, 16):
        city = cities[(bid - 1) % len(cities)]
        branches.append(
            (
                bid,
                f"{city} {rng.choice(('Central', 'Main Street', 'Riverside', 'North', 'Market Square'))}",
                city,
                rng.randint(1950, 2020),
            )
        )
    db.executemany("INSERT INTO branches VALUES (?, ?, ?, ?)", branches)

    customers = []
    for cid in range(1, 1201):
        name = words.person(rng)
        branch = rng.choice(branches)
        born = day(rng, dt.date(1940, 1, 1), dt.date(2005, 12, 31))
        email = words.email(rng, name, "mail.com") if rng.random() < 0.8 else None
        customers.append((cid, name, iso(born), branch[2], branch[0], email, weighted(rng, SEGMENTS)))
    db.executemany("INSERT INTO customers VALUES (?, ?, ?, ?, ?, ?, ?)", customers)

    accounts = []
    for customer in customers:
        for _ in range(rng.choice((0, 1, 1, 1, 2, 2, 3))):
            aid = len(accounts) + 1
            kind = weighted(rng, ACCOUNT_TYPES)
            opened = day(rng, dt.date(2008, 1, 1), dt.date(2024, 6, 30))
            closed = iso(day(rng, opened, dt.date(2024, 12, 31))) if rng.random() < 0.08 else None
            median = {"checking": 2500, "savings": 12000, "credit": 900}[kind] * (
                4 if customer[6] == "premier" else 1
            )
            balance = 0.0 if closed else lognormal(rng, median, 1.0)
            accounts.append((aid, f"ACC-{100000 + aid * 7}", customer[0], kind, iso(opened), balance, closed))
    db.executemany("INSERT INTO accounts VALUES (?, ?, ?, ?, ?, ?, ?)", accounts)

    # accounts closed before 2022 have no transactions (the statements start in 2022)
    active = picker(
        rng, accounts, [0.0 if a[6] and a[6] < "2022-01-02" else rng.paretovariate(1.5) for a in accounts]
    )
    transactions = []
    for tid in range(1, 12001):
        account = active()[0]
        end = dt.date.fromisoformat(account[6]) if account[6] else dt.date(2024, 12, 31)
        kind = weighted(rng, KINDS)
        amount = {"card payment": 45, "deposit": 900, "withdrawal": 150, "transfer": 400, "fee": 8}[kind]
        merchant = rng.choice(MERCHANTS) if kind == "card payment" else None
        when = day(rng, max(dt.date(2022, 1, 1), dt.date.fromisoformat(account[4])), end)
        transactions.append((tid, account[0], iso(when), lognormal(rng, amount, 0.6), kind, merchant))
    db.executemany("INSERT INTO transactions VALUES (?, ?, ?, ?, ?, ?)", transactions)

    loans = []
    for lid in range(1, 701):
        customer = rng.choice(customers)
        status = weighted(rng, LOAN_STATUSES)
        rate = round(rng.uniform(2.5, 9.5) + (1.5 if status == "defaulted" else 0), 2)
        loans.append(
            (
                lid,
                customer[0],
                round(lognormal(rng, 15000, 0.8), -2),
                rate,
                iso(day(rng, dt.date(2015, 1, 1), dt.date(2024, 10, 31))),
                rng.choice((12, 24, 36, 60, 120)),
                status,
            )
        )
    db.executemany("INSERT INTO loans VALUES (?, ?, ?, ?, ?, ?, ?)", loans)


# --- questions of this domain -----------------------------------------------------------------------------


def merchant_spending(ask: Ask) -> Draft | None:
    merchant = ask.pick(MERCHANTS)
    year = ask.pick(["2022", "2023", "2024"])
    at = f"merchant = {lit(merchant)} AND strftime('%Y', transaction_date) = {lit(year)}"
    return Draft(
        question=f"What was the total amount of card payments at {merchant} in {year}? Round to two decimals.",
        sql=f"SELECT ROUND(SUM(amount), 2) FROM transactions WHERE kind = 'card payment' AND {at}",
        near_miss=f"SELECT ROUND(SUM(amount), 2) FROM transactions WHERE kind = 'card payment' AND merchant = {lit(merchant)}",
        wrong=(f"SELECT ROUND(COUNT(amount), 2) FROM transactions WHERE kind = 'card payment' AND {at}",),
        kind="aggregate",
        difficulty="moderate",
        evidence=f"in {year} refers to strftime('%Y', transaction_date) = {lit(year)}",
        thought="Sum the amounts of the card payments at that merchant, filtered to the year.",
    )


def wealthy_customers(ask: Ask) -> Draft | None:
    branch = ask.pick(ask.values("branches", "name"))
    totals = sorted(
        (
            r[0]
            for r in ask.rows(
                "SELECT SUM(T1.balance) FROM accounts AS T1 INNER JOIN customers AS T2 ON T1.customer_id = T2.customer_id "
                f"INNER JOIN branches AS T3 ON T2.branch_id = T3.branch_id WHERE T3.name = {lit(branch)} GROUP BY T2.customer_id"
            )
        ),
        reverse=True,
    )
    if len(totals) < 6:
        return None
    x = round(totals[ask.rng.randint(2, min(12, len(totals) - 2))], -2)
    head = (
        "SELECT T2.name FROM accounts AS T1 INNER JOIN customers AS T2 ON T1.customer_id = T2.customer_id "
        f"INNER JOIN branches AS T3 ON T2.branch_id = T3.branch_id WHERE T3.name = {lit(branch)} GROUP BY T2.customer_id"
    )
    return Draft(
        question=f"Which customers of the branch {quoted(branch)} hold more than {x:g} in total over all their "
        "accounts? List their names.",
        sql=f"{head} HAVING SUM(T1.balance) > {lit(x)}",
        near_miss=f"{head} HAVING MAX(T1.balance) > {lit(x)}",
        wrong=(head,),
        kind="aggregate",
        difficulty="challenging",
        evidence="in total over all their accounts refers to SUM(balance)",
        thought="Accounts to customers to branches; per customer SUM(balance), kept by HAVING.",
    )


def default_rate_by_segment(ask: Ask) -> Draft | None:
    segment = ask.pick(sorted(SEGMENTS))
    joins = "loans AS T1 INNER JOIN customers AS T2 ON T1.customer_id = T2.customer_id"
    defaulted = "SUM(CASE WHEN T1.status = 'defaulted' THEN 1 ELSE 0 END)"
    return Draft(
        question=f"What percentage of the loans of {segment} customers have defaulted? Round to two decimals.",
        sql=f"SELECT ROUND(CAST({defaulted} AS REAL) * 100 / COUNT(*), 2) FROM {joins} WHERE T2.segment = {lit(segment)}",
        near_miss=f"SELECT ROUND({defaulted} * 100 / COUNT(*), 2) FROM {joins} WHERE T2.segment = {lit(segment)}",
        wrong=(f"SELECT ROUND(CAST({defaulted} AS REAL) * 100 / COUNT(*), 2) FROM {joins}",),
        kind="aggregate",
        difficulty="challenging",
        evidence="defaulted refers to status = 'defaulted'; percentage refers to CAST(... AS REAL) * 100 / COUNT(*)",
        thought="Count the defaulted loans with CASE inside SUM, as REAL, over all loans of the segment.",
    )


def account_activity(ask: Ask) -> Draft | None:
    number = ask.pick(ask.values("accounts", "account_number"))
    kind = ask.pick(sorted(KINDS))
    joins = "transactions AS T1 INNER JOIN accounts AS T2 ON T1.account_id = T2.account_id"
    return Draft(
        question=f"How many {kind} transactions were made on the account {quoted(number)}?",
        sql=f"SELECT COUNT(*) FROM {joins} WHERE T2.account_number = {lit(number)} AND T1.kind = {lit(kind)}",
        near_miss=f"SELECT COUNT(*) FROM {joins} WHERE T2.account_number = {lit(number)} AND T1.kind <> {lit(kind)}",
        wrong=(f"SELECT COUNT(*) FROM {joins} WHERE T2.account_number = {lit(number)}",),
        kind="join",
        difficulty="moderate",
        thought="Transactions joined to their account by account_id, filtered by account number and kind.",
    )


DOMAIN = Domain(
    name="banking",
    ddl=DDL,
    populate=populate,
    entities=(
        Entity(
            "branches",
            "branch_id",
            "branch",
            "branches",
            label="name",
            numbers=(Attribute("opened_year", "opening year"),),
            categories=(Attribute("city", "city"),),
        ),
        Entity(
            "customers",
            "customer_id",
            "customer",
            "customers",
            label="name",
            categories=(Attribute("segment", "segment"), Attribute("city", "city")),
            dates=(Attribute("birth_date", "birth date"),),
            optional=(Attribute("email", "email address"),),
        ),
        Entity(
            "accounts",
            "account_id",
            "account",
            "accounts",
            label="account_number",
            label_phrase="account number",
            named="numbered",
            numbers=(Attribute("balance", "balance"),),
            categories=(Attribute("account_type", "account type"),),
            dates=(Attribute("opened_on", "opening date"),),
            optional=(Attribute("closed_on", "closing date"),),
        ),
        Entity(
            "transactions",
            "transaction_id",
            "transaction",
            "transactions",
            numbers=(Attribute("amount", "amount"),),
            categories=(Attribute("kind", "kind"), Attribute("merchant", "merchant")),
            dates=(Attribute("transaction_date", "transaction date"),),
            optional=(Attribute("merchant", "merchant"),),
        ),
        Entity(
            "loans",
            "loan_id",
            "loan",
            "loans",
            numbers=(
                Attribute("amount", "amount"),
                Attribute("interest_rate", "interest rate"),
                Attribute("term_months", "term in months"),
            ),
            categories=(Attribute("status", "status"),),
            dates=(Attribute("start_date", "start date"),),
        ),
    ),
    links=(
        Link("customers", "branch_id", "branches", "branch"),
        Link("accounts", "customer_id", "customers", "holder"),
        Link("transactions", "account_id", "accounts", "account"),
        Link("loans", "customer_id", "customers", "borrower"),
    ),
    templates=(merchant_spending, wealthy_customers, default_rate_by_segment, account_activity),
)
