"""Harbor Market, the shop's storefront (WebArena's ``__SHOPPING__``): categories, search, product pages
with reviews, and a customer account with orders and a wish list."""

from __future__ import annotations

import sqlite3
from urllib.parse import urlencode

from fastapi import Request
from fastapi.responses import HTMLResponse, Response

from .seed import CATEGORIES, money, slugify
from .store import Store
from .web import (
    Site,
    button_form,
    e,
    field,
    form_data,
    link,
    login_redirect,
    not_found,
    page,
    redirect,
    select,
    table,
    textarea,
)

COOKIE = "shop_session"
COLOR = "#1f5f8b"
CATEGORY_SLUGS = {slugify(c): c for c in CATEGORIES}


def product_list(rows: list[sqlite3.Row]) -> str:
    if not rows:
        return "<p>No products found.</p>"
    items = "".join(
        f"<li>{link('/product/' + r['slug'], r['name'])} <span class='price'>{money(r['price_cents'])}</span></li>"
        for r in rows
    )
    return f"<ul class='products'>{items}</ul>"


def build(store: Store, control_token: str) -> Site:
    site = Site("shop", store, control_token)
    app = site.app

    def header(user: str | None) -> str:
        cats = " ".join(link(f"/category/{slug}", name) for slug, name in CATEGORY_SLUGS.items())
        account = (link("/customer/account", "My Account") + " " + link("/wishlist", "My Wish List")
                   + " " + link("/customer/account/logout", "Sign Out")) if user else link("/customer/account/login", "Sign In")
        search = ("<form role='search' action='/search' method='get'><input type='search' name='q' "
                  "aria-label='Search' placeholder='Search entire store here...'> <button type='submit'>Search</button></form>")
        return f"<strong>{link('/', 'Harbor Market')}</strong><nav aria-label='Categories'>{cats}</nav>{search}{account}"

    def render(request: Request, db: sqlite3.Connection, title: str, body: str) -> HTMLResponse:
        return page(f"{title} - Harbor Market", body, header=header(site.user(request, COOKIE)), color=COLOR)

    def missing(request: Request, db: sqlite3.Connection, what: str) -> HTMLResponse:
        return not_found(what, header=header(site.user(request, COOKIE)), color=COLOR)

    def customer(db: sqlite3.Connection, user: str) -> sqlite3.Row:
        return db.execute("SELECT * FROM customers WHERE email = ?", (user,)).fetchone()

    @app.get("/")
    async def home(request: Request) -> Response:
        db = site.db(request)
        rows = db.execute("SELECT * FROM products WHERE enabled = 1 AND id % 6 = 1 ORDER BY id").fetchall()
        body = ("<h1>Welcome to Harbor Market</h1><p>Groceries, kitchenware, gadgets, outdoor gear, books and toys.</p>"
                "<h2>Featured products</h2>" + product_list(rows))
        return render(request, db, "Home", body)

    @app.get("/category/{slug}")
    async def category(request: Request, slug: str, sort: str = "name") -> Response:
        db = site.db(request)
        if slug not in CATEGORY_SLUGS:
            return missing(request, db, f"There is no category {slug}.")
        order = "price_cents, name" if sort == "price" else "name"
        rows = db.execute(f"SELECT * FROM products WHERE enabled = 1 AND category = ? ORDER BY {order}",
                          (CATEGORY_SLUGS[slug],)).fetchall()
        sorting = (link(f"/category/{slug}", "Sort by name") if sort == "price"
                   else link(f"/category/{slug}?sort=price", "Sort by price: low to high"))
        body = f"<h1>{e(CATEGORY_SLUGS[slug])}</h1><p>{len(rows)} items. {sorting}</p>" + product_list(rows)
        return render(request, db, CATEGORY_SLUGS[slug], body)

    @app.get("/search")
    async def search(request: Request, q: str = "") -> Response:
        db = site.db(request)
        words = q.lower().split()
        rows = [r for r in db.execute("SELECT * FROM products WHERE enabled = 1 ORDER BY name").fetchall()
                if all(w in f"{r['name']} {r['category']}".lower() for w in words)]
        body = f"<h1>Search results for: '{e(q)}'</h1><p>{len(rows)} items found.</p>" + product_list(rows)
        return render(request, db, f"Search results for: '{q}'", body)

    @app.get("/product/{slug}")
    async def product(request: Request, slug: str, message: str = "") -> Response:
        db = site.db(request)
        p = db.execute("SELECT * FROM products WHERE slug = ? AND enabled = 1", (slug,)).fetchone()
        if p is None:
            return missing(request, db, "This product does not exist or is no longer sold.")
        reviews = db.execute("SELECT * FROM reviews WHERE product_id = ? ORDER BY id", (p["id"],)).fetchall()
        stock = f"In stock ({p['qty']} left)" if p["qty"] > 0 else "Out of stock"
        notice = f"<p class='message' role='status'>{e(message)}</p>" if message else ""
        listed = "".join(
            f"<article class='review'><h3>{e(r['title'])}</h3><p>Rating: {r['rating']}/5, by {e(r['nickname'])} "
            f"on {e(r['created'])}</p><p>{e(r['text'])}</p></article>" for r in reviews
        ) or "<p>No reviews yet.</p>"
        body = (
            f"{notice}<h1>{e(p['name'])}</h1><p>SKU: {e(p['sku'])}</p>"
            f"<p id='price'>Price: {money(p['price_cents'])}</p><p>Brand: {e(p['brand'])}</p>"
            f"<p>Category: {link('/category/' + slugify(p['category']), p['category'])}</p>"
            f"<p>{stock}</p><p>{e(p['description'])}</p>"
            + button_form(f"/wishlist/add/{p['id']}", "Add to Wish List")
            + f"<h2>Reviews ({len(reviews)})</h2><div id='reviews'>{listed}</div>"
            + f"<h2>Write a review</h2><form method='post' action='/review/{p['id']}'>"
            + field("Nickname", "nickname") + select("Rating", "rating", ["5", "4", "3", "2", "1"], "5")
            + field("Summary", "title") + textarea("Review", "text")
            + "<p><button type='submit'>Submit Review</button></p></form>"
        )
        return render(request, db, p["name"], body)

    @app.post("/review/{product_id}")
    async def review(request: Request, product_id: int) -> Response:
        db = site.db(request)
        p = db.execute("SELECT slug FROM products WHERE id = ? AND enabled = 1", (product_id,)).fetchone()
        if p is None:
            return missing(request, db, "This product does not exist.")
        form = await form_data(request)
        nickname, title, text = (form.get(k, "").strip() for k in ("nickname", "title", "text"))
        rating = form.get("rating", "")
        if not (nickname and title and text) or rating not in {"1", "2", "3", "4", "5"}:
            return redirect(f"/product/{p['slug']}?message=Please+fill+in+every+field+of+the+review.")
        db.execute("INSERT INTO reviews (product_id, nickname, rating, title, text, created) VALUES (?,?,?,?,?,?)",
                   (product_id, nickname, int(rating), title, text, "2024-03-01"))
        return redirect(f"/product/{p['slug']}?message=You+submitted+your+review.")

    # --- the customer account -------------------------------------------------------------------------
    @app.get("/customer/account/login")
    async def login_page(request: Request, next: str = "", failed: int = 0) -> Response:  # noqa: A002
        db = site.db(request)
        error = "<p class='error' role='alert'>The email or password is wrong.</p>" if failed else ""
        body = (f"<h1>Customer Login</h1>{error}<form method='post' action='/customer/account/login'>"
                f"<input type='hidden' name='next' value='{e(next)}'>" + field("Email", "email", kind="email")
                + field("Password", "password", kind="password") + "<p><button type='submit'>Sign In</button></p></form>")
        return render(request, db, "Customer Login", body)

    @app.post("/customer/account/login")
    async def login(request: Request) -> Response:
        return await site.sign_in(request, query="SELECT email FROM customers WHERE email = ? AND password = ?",
                                  name_field="email", cookie=COOKIE, login_path="/customer/account/login",
                                  home="/customer/account", normalise=lambda email: email.strip().lower())

    @app.get("/customer/account/logout")
    async def logout(request: Request) -> Response:
        return site.logged_out(request, redirect("/"), COOKIE)

    @app.get("/customer/account")
    async def account(request: Request) -> Response:
        db = site.db(request)
        user = site.user(request, COOKIE)
        if user is None:
            return login_redirect("/customer/account/login", "/customer/account")
        c = customer(db, user)
        body = (f"<h1>My Account</h1><h2>Contact Information</h2><p>{e(c['first'])} {e(c['last'])}</p>"
                f"<p>{e(c['email'])}</p><p>{e(c['city'])}</p><ul><li>{link('/sales/order/history', 'My Orders')}</li>"
                f"<li>{link('/wishlist', 'My Wish List')}</li></ul>")
        return render(request, db, "My Account", body)

    @app.get("/sales/order/history")
    async def orders(request: Request) -> Response:
        db = site.db(request)
        user = site.user(request, COOKIE)
        if user is None:
            return login_redirect("/customer/account/login", "/sales/order/history")
        rows = db.execute("SELECT * FROM orders WHERE customer_id = ? ORDER BY created DESC, id DESC",
                          (customer(db, user)["id"],)).fetchall()
        grid = table(["Order #", "Date", "Order Total", "Status"], [
            [link(f"/sales/order/view/{o['increment']}", o["increment"]), e(o["created"]), money(o["total_cents"]),
             e(o["status"].capitalize())] for o in rows])
        return render(request, db, "My Orders", f"<h1>My Orders</h1>{grid}")

    @app.get("/sales/order/view/{increment}")
    async def order(request: Request, increment: str) -> Response:
        db = site.db(request)
        user = site.user(request, COOKIE)
        if user is None:
            return login_redirect("/customer/account/login", f"/sales/order/view/{increment}")
        o = db.execute("SELECT * FROM orders WHERE increment = ? AND customer_id = ?",
                       (increment, customer(db, user)["id"])).fetchone()
        if o is None:
            return missing(request, db, f"You have no order #{increment}.")
        items = db.execute("SELECT * FROM order_items WHERE order_id = ?", (o["id"],)).fetchall()
        grid = table(["Product Name", "Price", "Qty", "Subtotal"], [
            [e(i["name"]), money(i["price_cents"]), str(i["qty"]), money(i["price_cents"] * i["qty"])] for i in items])
        body = (f"<h1>Order # {e(increment)}</h1><p>Status: {e(o['status'].capitalize())}</p>"
                f"<p>Order Date: {e(o['created'])}</p>{grid}<p>Subtotal: {money(o['subtotal_cents'])}</p>"
                f"<p>Shipping &amp; Handling: {money(o['shipping_cents'])}</p><p>Grand Total: {money(o['total_cents'])}</p>")
        return render(request, db, f"Order # {increment}", body)

    @app.get("/wishlist")
    async def wishlist(request: Request, message: str = "") -> Response:
        db = site.db(request)
        user = site.user(request, COOKIE)
        if user is None:
            return login_redirect("/customer/account/login", "/wishlist")
        rows = db.execute("SELECT p.* FROM wishlist w JOIN products p ON p.id = w.product_id WHERE w.customer_id = ? "
                          "ORDER BY w.added", (customer(db, user)["id"],)).fetchall()
        notice = f"<p class='message' role='status'>{e(message)}</p>" if message else ""
        items = "".join(
            f"<li>{link('/product/' + r['slug'], r['name'])} {money(r['price_cents'])} "
            + button_form(f"/wishlist/remove/{r['id']}", "Remove", aria_label=f"Remove {r['name']}") + "</li>"
            for r in rows
        )
        body = f"{notice}<h1>My Wish List</h1>" + (f"<ul id='wishlist'>{items}</ul>" if rows else
                                                   "<p id='wishlist'>You have no items in your wish list.</p>")
        return render(request, db, "My Wish List", body)

    @app.post("/wishlist/add/{product_id}")
    async def wishlist_add(request: Request, product_id: int) -> Response:
        db = site.db(request)
        user = site.user(request, COOKIE)
        if user is None:
            return login_redirect("/customer/account/login", "/wishlist")
        p = db.execute("SELECT name FROM products WHERE id = ? AND enabled = 1", (product_id,)).fetchone()
        if p is None:
            return missing(request, db, "This product does not exist.")
        added = db.execute("SELECT COALESCE(MAX(added), 0) + 1 FROM wishlist").fetchone()[0]
        db.execute("INSERT OR IGNORE INTO wishlist VALUES (?, ?, ?)", (customer(db, user)["id"], product_id, added))
        return redirect("/wishlist?" + urlencode({"message": f"{p['name']} has been added to your Wish List."}))

    @app.post("/wishlist/remove/{product_id}")
    async def wishlist_remove(request: Request, product_id: int) -> Response:
        db = site.db(request)
        user = site.user(request, COOKIE)
        if user is None:
            return login_redirect("/customer/account/login", "/wishlist")
        db.execute("DELETE FROM wishlist WHERE customer_id = ? AND product_id = ?", (customer(db, user)["id"], product_id))
        return redirect("/wishlist")

    return site
