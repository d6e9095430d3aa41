"""Harbor Market's admin panel (WebArena's ``__SHOPPING_ADMIN__``): products, orders and customers, each
with a grid and a page to view or edit one.  Every page but the login page needs the admin logged in."""

from __future__ import annotations

import re
import sqlite3
from urllib.parse import urlencode

from fastapi import Request
from fastapi.responses import HTMLResponse, Response

from .seed import money
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
)

COOKIE = "admin_session"
COLOR = "#41362f"
PRICE = re.compile(r"^\$?\s*(\d{1,6})(?:\.(\d{1,2}))?$")


def build(store: Store, control_token: str) -> Site:
    site = Site("admin", store, control_token)
    app = site.app

    def header(user: str | None) -> str:
        if user is None:
            return "<strong>Harbor Market Admin</strong>"
        nav = " ".join(link(href, text) for href, text in (
            ("/admin/dashboard", "Dashboard"), ("/admin/catalog/product", "Products"), ("/admin/sales/order", "Orders"),
            ("/admin/customer", "Customers")))
        return f"<strong>Harbor Market Admin</strong><nav aria-label='Admin menu'>{nav}</nav>{link('/admin/logout', 'Sign Out')}"

    def render(title: str, body: str, user: str | None) -> HTMLResponse:
        return page(f"{title} / Harbor Market Admin", body, header=header(user), color=COLOR)

    def guard(request: Request) -> tuple[sqlite3.Connection, str | None]:
        db = site.db(request)
        return db, site.user(request, COOKIE)

    def notice(message: str) -> str:
        return f"<p class='message' role='status'>{e(message)}</p>" if message else ""

    def search_form(action: str, value: str) -> str:
        return (f"<form method='get' action='{action}'><input type='text' name='search' value='{e(value)}' "
                "aria-label='Search by keyword'> <button type='submit'>Search</button></form>")

    @app.get("/")
    @app.get("/admin")
    async def root() -> Response:
        return redirect("/admin/dashboard")

    @app.get("/admin/login")
    async def login_page(next: str = "", failed: int = 0) -> Response:  # noqa: A002
        error = "<p class='error' role='alert'>The account sign-in was incorrect.</p>" if failed else ""
        body = (f"<h1>Welcome, please sign in</h1>{error}<form method='post' action='/admin/login'>"
                f"<input type='hidden' name='next' value='{e(next)}'>" + field("Username", "username")
                + field("Password", "password", kind="password") + "<p><button type='submit'>Sign in</button></p></form>")
        return render("Sign in", body, None)

    @app.post("/admin/login")
    async def login(request: Request) -> Response:
        return await site.sign_in(request, query="SELECT username FROM admins WHERE username = ? AND password = ?",
                                  name_field="username", cookie=COOKIE, login_path="/admin/login", home="/admin/dashboard")

    @app.get("/admin/logout")
    async def logout(request: Request) -> Response:
        return site.logged_out(request, redirect("/admin/login"), COOKIE)

    @app.get("/admin/dashboard")
    async def dashboard(request: Request) -> Response:
        db, user = guard(request)
        if user is None:
            return login_redirect("/admin/login", "/admin/dashboard")
        count, revenue = db.execute(
            "SELECT COUNT(*), COALESCE(SUM(total_cents), 0) FROM orders WHERE status != 'canceled'").fetchone()
        latest = db.execute("SELECT o.*, c.first, c.last FROM orders o JOIN customers c ON c.id = o.customer_id "
                            "ORDER BY o.created DESC, o.id DESC LIMIT 5").fetchall()
        grid = table(["Order #", "Customer", "Total"], [
            [link(f"/admin/sales/order/view/{o['increment']}", o["increment"]), e(f"{o['first']} {o['last']}"),
             money(o["total_cents"])] for o in latest])
        body = (f"<h1>Dashboard</h1><p>Lifetime Sales: {money(revenue)}</p><p>Orders (not canceled): {count}</p>"
                f"<h2>Last Orders</h2>{grid}")
        return render("Dashboard", body, user)

    # --- products ---------------------------------------------------------------------------------------
    @app.get("/admin/catalog/product")
    async def products(request: Request, search: str = "") -> Response:
        db, user = guard(request)
        if user is None:
            return login_redirect("/admin/login", "/admin/catalog/product")
        rows = [r for r in db.execute("SELECT * FROM products ORDER BY id").fetchall()
                if search.lower() in f"{r['name']} {r['sku']}".lower()]
        grid = table(["ID", "Name", "SKU", "Price", "Quantity", "Status"], [
            [str(r["id"]), link(f"/admin/catalog/product/edit/{r['id']}", r["name"]), e(r["sku"]),
             money(r["price_cents"]), str(r["qty"]), "Enabled" if r["enabled"] else "Disabled"] for r in rows],
            table_id="products")
        body = f"<h1>Products</h1>{search_form('/admin/catalog/product', search)}<p>{len(rows)} records found</p>{grid}"
        return render("Products", body, user)

    @app.get("/admin/catalog/product/edit/{product_id}")
    async def product(request: Request, product_id: int, message: str = "", error: str = "") -> Response:
        db, user = guard(request)
        if user is None:
            return login_redirect("/admin/login", f"/admin/catalog/product/edit/{product_id}")
        p = db.execute("SELECT * FROM products WHERE id = ?", (product_id,)).fetchone()
        if p is None:
            return not_found(f"There is no product {product_id}.", header=header(user), color=COLOR)
        problem = f"<p class='error' role='alert'>{e(error)}</p>" if error else ""
        body = (
            f"{notice(message)}{problem}<h1>{e(p['name'])}</h1><p>SKU: {e(p['sku'])}</p>"
            f"<form method='post' action='/admin/catalog/product/save/{p['id']}'>"
            + field("Product Name", "name", p["name"]) + field("Price", "price", f"{p['price_cents'] / 100:.2f}")
            + field("Quantity", "qty", p["qty"])
            + select("Status", "status", ["Enabled", "Disabled"], "Enabled" if p["enabled"] else "Disabled")
            + "<p><button type='submit'>Save</button></p></form>"
        )
        return render(p["name"], body, user)

    @app.post("/admin/catalog/product/save/{product_id}")
    async def save_product(request: Request, product_id: int) -> Response:
        db, user = guard(request)
        if user is None:
            return login_redirect("/admin/login", f"/admin/catalog/product/edit/{product_id}")
        form = await form_data(request)
        back = f"/admin/catalog/product/edit/{product_id}?"
        name, qty, status = form.get("name", "").strip(), form.get("qty", "").strip(), form.get("status", "")
        price = PRICE.match(form.get("price", "").strip())
        if not name or price is None or not qty.isdigit() or status not in {"Enabled", "Disabled"}:
            return redirect(back + urlencode({"error": "Please give a name, a price such as 12.50, a whole quantity and a status."}))
        cents = int(price.group(1)) * 100 + int((price.group(2) or "0").ljust(2, "0"))
        db.execute("UPDATE products SET name = ?, price_cents = ?, qty = ?, enabled = ? WHERE id = ?",
                   (name, cents, int(qty), int(status == "Enabled"), product_id))
        return redirect(back + urlencode({"message": "You saved the product."}))

    # --- orders -----------------------------------------------------------------------------------------
    @app.get("/admin/sales/order")
    async def orders(request: Request, search: str = "") -> Response:
        db, user = guard(request)
        if user is None:
            return login_redirect("/admin/login", "/admin/sales/order")
        rows = [r for r in db.execute("SELECT o.*, c.first, c.last FROM orders o JOIN customers c ON c.id = o.customer_id "
                                      "ORDER BY o.created DESC, o.id DESC").fetchall()
                if search.lower() in f"{r['increment']} {r['first']} {r['last']}".lower()]
        grid = table(["Order #", "Purchase Date", "Bill-to Name", "Grand Total", "Status"], [
            [link(f"/admin/sales/order/view/{r['increment']}", r["increment"]), e(r["created"]),
             e(f"{r['first']} {r['last']}"), money(r["total_cents"]), e(r["status"].capitalize())] for r in rows],
            table_id="orders")
        body = f"<h1>Orders</h1>{search_form('/admin/sales/order', search)}<p>{len(rows)} records found</p>{grid}"
        return render("Orders", body, user)

    @app.get("/admin/sales/order/view/{increment}")
    async def order(request: Request, increment: str, message: str = "") -> Response:
        db, user = guard(request)
        if user is None:
            return login_redirect("/admin/login", f"/admin/sales/order/view/{increment}")
        o = db.execute("SELECT o.*, c.first, c.last, c.email FROM orders o JOIN customers c ON c.id = o.customer_id "
                       "WHERE increment = ?", (increment,)).fetchone()
        if o is None:
            return not_found(f"There is no order {increment}.", header=header(user), color=COLOR)
        items = db.execute("SELECT * FROM order_items WHERE order_id = ?", (o["id"],)).fetchall()
        grid = table(["Product", "Price", "Qty Ordered", "Row Total"], [
            [e(i["name"]), money(i["price_cents"]), str(i["qty"]), money(i["price_cents"] * i["qty"])] for i in items])
        cancel = (button_form(f"/admin/sales/order/cancel/{increment}", "Cancel Order")
                  if o["status"] in ("pending", "processing") else "")
        body = (
            f"{notice(message)}<h1>Order # {e(increment)}</h1>{cancel}"
            f"<p>Order Status: <span id='order-status'>{e(o['status'].capitalize())}</span></p>"
            f"<p>Order Date: {e(o['created'])}</p><p>Customer Name: "
            + link(f"/admin/customer/edit/{o['customer_id']}", f"{o['first']} {o['last']}") + "</p>"
            + f"<p>Email: {e(o['email'])}</p><h2>Items Ordered</h2>{grid}<h2>Order Totals</h2>"
            f"<p>Subtotal: {money(o['subtotal_cents'])}</p><p>Shipping &amp; Handling: {money(o['shipping_cents'])}</p>"
            f"<p>Grand Total: {money(o['total_cents'])}</p>"
        )
        return render(f"Order # {increment}", body, user)

    @app.post("/admin/sales/order/cancel/{increment}")
    async def cancel(request: Request, increment: str) -> Response:
        db, user = guard(request)
        if user is None:
            return login_redirect("/admin/login", f"/admin/sales/order/view/{increment}")
        updated = db.execute("UPDATE orders SET status = 'canceled' WHERE increment = ? AND status IN ('pending', "
                             "'processing')", (increment,)).rowcount
        message = "You canceled the order." if updated else "This order cannot be canceled."
        return redirect(f"/admin/sales/order/view/{increment}?" + urlencode({"message": message}))

    # --- customers --------------------------------------------------------------------------------------
    @app.get("/admin/customer")
    async def customers(request: Request, search: str = "") -> Response:
        db, user = guard(request)
        if user is None:
            return login_redirect("/admin/login", "/admin/customer")
        rows = [r for r in db.execute("SELECT * FROM customers ORDER BY id").fetchall()
                if search.lower() in f"{r['first']} {r['last']} {r['email']}".lower()]
        grid = table(["ID", "Name", "Email", "City"], [
            [str(r["id"]), link(f"/admin/customer/edit/{r['id']}", f"{r['first']} {r['last']}"), e(r["email"]),
             e(r["city"])] for r in rows], table_id="customers")
        body = f"<h1>Customers</h1>{search_form('/admin/customer', search)}<p>{len(rows)} records found</p>{grid}"
        return render("Customers", body, user)

    @app.get("/admin/customer/edit/{customer_id}")
    async def customer(request: Request, customer_id: int, message: str = "", error: str = "") -> Response:
        db, user = guard(request)
        if user is None:
            return login_redirect("/admin/login", f"/admin/customer/edit/{customer_id}")
        c = db.execute("SELECT * FROM customers WHERE id = ?", (customer_id,)).fetchone()
        if c is None:
            return not_found(f"There is no customer {customer_id}.", header=header(user), color=COLOR)
        placed = db.execute("SELECT * FROM orders WHERE customer_id = ? ORDER BY created DESC, id DESC",
                            (customer_id,)).fetchall()
        grid = table(["Order #", "Purchase Date", "Grand Total", "Status"], [
            [link(f"/admin/sales/order/view/{o['increment']}", o["increment"]), e(o["created"]), money(o["total_cents"]),
             e(o["status"].capitalize())] for o in placed], table_id="customer-orders")
        problem = f"<p class='error' role='alert'>{e(error)}</p>" if error else ""
        body = (
            f"{notice(message)}{problem}<h1>{e(c['first'])} {e(c['last'])}</h1>"
            f"<form method='post' action='/admin/customer/save/{customer_id}'>"
            + field("First Name", "first", c["first"]) + field("Last Name", "last", c["last"])
            + field("Email", "email", c["email"]) + field("City", "city", c["city"])
            + f"<p><button type='submit'>Save Customer</button></p></form><h2>Orders</h2>{grid}"
        )
        return render(f"{c['first']} {c['last']}", body, user)

    @app.post("/admin/customer/save/{customer_id}")
    async def save_customer(request: Request, customer_id: int) -> Response:
        db, user = guard(request)
        if user is None:
            return login_redirect("/admin/login", f"/admin/customer/edit/{customer_id}")
        form = await form_data(request)
        values = {k: form.get(k, "").strip() for k in ("first", "last", "email", "city")}
        back = f"/admin/customer/edit/{customer_id}?"
        if not all(values.values()) or "@" not in values["email"]:
            return redirect(back + urlencode({"error": "Please fill in every field with a valid email address."}))
        db.execute("UPDATE customers SET first = ?, last = ?, email = ?, city = ? WHERE id = ?",
                   (values["first"], values["last"], values["email"].lower(), values["city"], customer_id))
        return redirect(back + urlencode({"message": "You saved the customer."}))

    return site
