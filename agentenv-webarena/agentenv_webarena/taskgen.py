"""The bundled tasks: WebArena configs written from the sites' seeded data, each with its expert's plan.

    python -m agentenv_webarena.taskgen     # rewrites agentenv_webarena/data/tasks.json

Tasks come from templates, as WebArena's do (``intent_template`` + ``instantiation_dict``): information
seeking (answers checked by string match), navigation (URL match) and content changes (program-HTML checks
of the pages afterwards), over the shop, its admin panel, the forum, the wiki, and across two of them.
Every third task (in the order written) goes to the test split.  The answers are read from
:func:`~agentenv_webarena.sites.seed.seed_data`, the same data the sites serve.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

from .sites.seed import (
    FORUM_USERNAME,
    SEED,
    SHOP_CUSTOMER_EMAIL,
    SeedData,
    money,
    seed_data,
    slugify,
)

SHOP, ADMIN, FORUM, WIKI = "__SHOPPING__", "__SHOPPING_ADMIN__", "__REDDIT__", "__WIKIPEDIA__"
TASKS_FILE = Path(__file__).parent / "data" / "tasks.json"


# --- plan steps and evaluators ---------------------------------------------------------------------------


def click(role: str, name: str, thought: str) -> dict[str, Any]:
    return {"thought": thought, "click": {"role": role, "name": name}}


def type_in(role: str, name: str, text: str, thought: str, enter: bool = False) -> dict[str, Any]:
    return {"thought": thought, "type": {"role": role, "name": name}, "text": text, "enter": enter}


def tab(index: int, thought: str) -> dict[str, Any]:
    return {"thought": thought, "tab_focus": index}


def stop(answer: str, thought: str) -> dict[str, Any]:
    return {"thought": thought, "stop": answer}


def strings(*, must_include: list[str] | None = None, exact: str | None = None, fuzzy: Any = None,
            raw: str = "", note: str = "") -> dict[str, Any]:
    answers: dict[str, Any] = {}
    if must_include is not None:
        answers["must_include"] = must_include
    if exact is not None:
        answers["exact_match"] = exact
    if fuzzy is not None:
        answers["fuzzy_match"] = fuzzy
    spec = {"eval_types": ["string_match"], "reference_answers": answers, "reference_url": "", "program_html": [],
            "reference_answer_raw_annotation": raw}
    if note:
        spec["string_note"] = note
    return spec


def url_is(url: str) -> dict[str, Any]:
    return {"eval_types": ["url_match"], "reference_answers": None, "reference_url": url, "program_html": [],
            "url_note": "GOLD in PRED"}


def page_shows(*targets: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    """Program-HTML targets: ``(url or "last", JS locator or "", required_contents)``."""
    return {"eval_types": ["program_html"], "reference_answers": None, "reference_url": "",
            "program_html": [{"url": u, "locator": loc, "required_contents": req} for u, loc, req in targets]}


def shop_search(name: str) -> list[dict[str, Any]]:
    return [
        type_in("searchbox", "Search", name, f"I search the store for {name}.", enter=True),
        click("link", name, f"{name} is in the results; I open its page."),
    ]


def admin_find(menu: str, query: str, what: str) -> list[dict[str, Any]]:
    return [
        click("link", menu, f"{what} are listed under {menu} in the admin menu."),
        type_in("textbox", "Search by keyword", query, f"I filter the grid for {query}.", enter=True),
    ]


def forum_post(forum: str, title: str) -> list[dict[str, Any]]:
    return [
        click("link", "Forums", f"The post is in the {forum} forum; I open the list of forums."),
        click("link", forum, f"I open the {forum} forum."),
        click("link", title, f"I open the post \"{title}\"."),
    ]


def wiki_article(title: str) -> list[dict[str, Any]]:
    return [
        type_in("searchbox", "Search Almanac", title, f"I search Almanac for {title}.", enter=True),
        click("link", title, f"I open the article {title}."),
    ]


# --- the tasks -------------------------------------------------------------------------------------------


class TaskWriter:
    """Collects tasks as WebArena configs, numbering templates as they come."""

    def __init__(self) -> None:
        self.tasks: list[dict[str, Any]] = []
        self.template_id = -1

    def template(self) -> None:
        self.template_id += 1

    def add(self, *, sites: list[str], start: str, template: str, values: dict[str, str], spec: dict[str, Any],
            plan: list[dict[str, Any]], login: bool = False) -> None:
        intent = template
        for key, value in values.items():
            intent = intent.replace("{{" + key + "}}", value)
        self.tasks.append({
            "sites": sites, "task_id": -1, "require_login": login, "storage_state": None, "start_url": start,
            "geolocation": None, "intent_template": template, "instantiation_dict": values, "intent": intent,
            "require_reset": "program_html" in spec["eval_types"], "eval": spec,
            "intent_template_id": self.template_id, "expert": plan,
        })

    def configs(self) -> list[dict[str, Any]]:
        """Every task, train (two in three) before test (every third), numbered."""
        for i, task in enumerate(self.tasks):
            task["split"] = "test" if i % 3 == 2 else "train"
        ordered = [t for t in self.tasks if t["split"] == "train"] + [t for t in self.tasks if t["split"] == "test"]
        for task_id, task in enumerate(ordered):
            task["task_id"] = task_id
        return ordered


def shop_tasks(w: TaskWriter, data: SeedData, rng: random.Random) -> None:
    products = [p for p in data.products if p.enabled]

    w.template()
    for p in rng.sample(products, 3):
        w.add(sites=["shopping"], start=SHOP, template="What is the price of {{product}}?", values={"product": p.name},
              spec=strings(must_include=[f"{p.price_cents / 100:.2f}"], raw=money(p.price_cents)),
              plan=shop_search(p.name) + [stop(money(p.price_cents), f"The product page gives the price, {money(p.price_cents)}.")])

    w.template()
    counts = {p.id: sum(r.product_id == p.id for r in data.reviews) for p in products}
    for p in (next(p for p in products if counts[p.id] == 0), next(p for p in products if counts[p.id] == 4)):
        n = str(counts[p.id])
        w.add(sites=["shopping"], start=SHOP, template="How many reviews does {{product}} have?",
              values={"product": p.name}, spec=strings(must_include=[n], raw=n),
              plan=shop_search(p.name) + [stop(n, f"The reviews heading of the product page counts {n}.")])

    w.template()
    for category in ("Kitchen", "Toys"):
        cheapest = min((p for p in products if p.category == category), key=lambda p: p.price_cents)
        w.add(sites=["shopping"], start=SHOP, template="What is the cheapest product in the {{category}} category?",
              values={"category": category}, spec=strings(must_include=[cheapest.name], raw=cheapest.name),
              plan=[click("link", category, f"I open the {category} category."),
                    click("link", "Sort by price: low to high", "Sorting by price puts the cheapest first."),
                    stop(cheapest.name, f"The first product is {cheapest.name}, at {money(cheapest.price_cents)}.")])

    w.template()
    for p in rng.sample(products, 2):
        w.add(sites=["shopping"], start=SHOP, template="Show me the product page of {{product}}.",
              values={"product": p.name}, spec=url_is(f"{SHOP}/product/{p.slug}"),
              plan=shop_search(p.name) + [stop("", "This is the product's page.")])

    w.template()
    for query in ("cast iron", "wireless earbuds"):
        w.add(sites=["shopping"], start=SHOP, template="Search the store for \"{{query}}\".", values={"query": query},
              spec=url_is(f"{SHOP}/search?q={quote_plus(query)}"),
              plan=[type_in("searchbox", "Search", query, f"I type {query} in the search box.", enter=True),
                    stop("", "The search results are shown.")])

    w.template()
    category = "Outdoor"
    w.add(sites=["shopping"], start=SHOP, template="Show me the {{category}} products from the cheapest to the most expensive.",
          values={"category": category}, spec=url_is(f"{SHOP}/category/{slugify(category)}?sort=price"),
          plan=[click("link", category, f"I open the {category} category."),
                click("link", "Sort by price: low to high", "I sort it by price."),
                stop("", "The products are sorted from the cheapest.")])

    w.template()
    for p in rng.sample(products, 2):
        w.add(sites=["shopping"], start=SHOP, template="Add {{product}} to my wish list.", values={"product": p.name},
              spec=page_shows((f"{SHOP}/wishlist", "document.querySelector('#wishlist').outerText",
                               {"must_include": [p.name]})),
              plan=shop_search(p.name) + [click("button", "Add to Wish List", "I add it to my wish list."),
                                          stop("", "The wish list now holds the product.")], login=True)

    w.template()
    reviews = [("Lou", "4", "Sturdy and handy", "Good value and it works every day."),
               ("Marta", "2", "Not for me", "It broke after a week of use.")]
    for p, (nick, rating, title, text) in zip(rng.sample(products, 2), reviews, strict=True):
        values = {"rating": rating, "product": p.name, "nickname": nick, "title": title, "text": text}
        w.add(sites=["shopping"], start=SHOP,
              template="Write a {{rating}}-star review of {{product}} as \"{{nickname}}\", with the summary "
                       "\"{{title}}\" and the text \"{{text}}\".", values=values,
              spec=page_shows((f"{SHOP}/product/{p.slug}", "document.querySelector('#reviews').outerText",
                               {"must_include": [title, text, f"Rating: {rating}/5, by {nick}"]})),
              plan=shop_search(p.name) + [
                  type_in("textbox", "Nickname", nick, "I fill in the review form, starting with the nickname."),
                  type_in("combobox", "Rating", rating, f"I choose a rating of {rating}."),
                  type_in("textbox", "Summary", title, "I give the summary."),
                  type_in("textbox", "Review", text, "I write the review's text."),
                  click("button", "Submit Review", "I submit the review."),
                  stop("", "The review is posted.")])

    nora = next(c for c in data.customers if c.email == SHOP_CUSTOMER_EMAIL)
    mine = [o for o in data.orders if o.customer_id == nora.id]
    my_account = [click("link", "My Account", "My orders are in my account."),
                  click("link", "My Orders", "I open the list of my orders.")]
    w.template()
    for o in rng.sample(mine, 2):
        w.add(sites=["shopping"], start=SHOP, template="What was the grand total of my order {{order}}?",
              values={"order": o.increment},
              spec=strings(must_include=[f"{o.total_cents / 100:.2f}"], raw=money(o.total_cents)),
              plan=my_account + [click("link", o.increment, f"I open order {o.increment}."),
                                 stop(money(o.total_cents), f"Its grand total is {money(o.total_cents)}.")], login=True)

    w.template()
    latest = max(mine, key=lambda o: (o.created, o.id))
    w.add(sites=["shopping"], start=SHOP, template="On which date did I place my most recent order?", values={},
          spec=strings(fuzzy=[latest.created], raw=latest.created),
          plan=my_account + [stop(latest.created, f"The newest order is listed first, placed on {latest.created}.")],
          login=True)

    w.template()
    missing = "Northwind Espresso Machine"
    w.add(sites=["shopping"], start=SHOP, template="What is the price of the {{product}}?", values={"product": missing},
          spec=strings(fuzzy="N/A", raw="N/A", note=f"Harbor Market does not sell a {missing}"),
          plan=[type_in("searchbox", "Search", missing, f"I search the store for the {missing}.", enter=True),
                stop("N/A", "No product matches: the store does not sell it, so the question cannot be answered.")])


def admin_tasks(w: TaskWriter, data: SeedData, rng: random.Random) -> None:
    def add(**kw: Any) -> None:
        w.add(sites=["shopping_admin"], start=ADMIN, login=True, **kw)

    customer_name = {c.id: c.name for c in data.customers}
    w.template()
    for o in rng.sample(data.orders, 2):
        add(template="What is the grand total of order {{order}}?", values={"order": o.increment},
            spec=strings(must_include=[f"{o.total_cents / 100:.2f}"], raw=money(o.total_cents)),
            plan=admin_find("Orders", o.increment, "Orders") + [
                click("link", o.increment, f"I open order {o.increment}."),
                stop(money(o.total_cents), f"The order's grand total is {money(o.total_cents)}.")])

    w.template()
    for o in rng.sample(data.orders, 2):
        status = o.status.capitalize()
        add(template="What is the status of order {{order}}?", values={"order": o.increment},
            spec=strings(must_include=[o.status], raw=status),
            plan=admin_find("Orders", o.increment, "Orders") + [
                click("link", o.increment, f"I open order {o.increment}."),
                stop(status, f"The order's status is {status}.")])

    w.template()
    for c in rng.sample([c for c in data.customers if any(o.customer_id == c.id for o in data.orders)], 2):
        n = str(sum(o.customer_id == c.id for o in data.orders))
        add(template="How many orders has the customer {{customer}} placed?", values={"customer": c.name},
            spec=strings(must_include=[n], raw=n),
            plan=admin_find("Customers", c.name, "Customers") + [
                click("link", c.name, f"I open {c.name}'s page, which lists the orders."),
                stop(n, f"The Orders table has {n} rows.")])

    w.template()
    c = rng.choice(data.customers[1:])
    add(template="What is the email address of the customer {{customer}}?", values={"customer": c.name},
        spec=strings(exact=c.email, raw=c.email),
        plan=admin_find("Customers", c.name, "Customers") + [stop(c.email, f"The grid shows the email, {c.email}.")])

    w.template()
    for p in rng.sample(data.products, 2):
        add(template="How many units of {{product}} are in stock?", values={"product": p.name},
            spec=strings(must_include=[str(p.qty)], raw=str(p.qty)),
            plan=admin_find("Products", p.name, "Products") + [stop(str(p.qty), f"Its Quantity column says {p.qty}.")])

    w.template()
    for p in rng.sample(data.products, 2):
        add(template="Open the edit page of the product {{product}}.", values={"product": p.name},
            spec=url_is(f"{ADMIN}/catalog/product/edit/{p.id}"),
            plan=admin_find("Products", p.name, "Products") + [
                click("link", p.name, "I open the product."), stop("", "This is its edit page.")])

    w.template()
    o = rng.choice(data.orders)
    add(template="Show me the order {{order}}.", values={"order": o.increment},
        spec=url_is(f"{ADMIN}/sales/order/view/{o.increment}"),
        plan=admin_find("Orders", o.increment, "Orders") + [
            click("link", o.increment, f"I open order {o.increment}."), stop("", "The order is shown.")])

    def edit_product(p: Any, field: str, role: str, value: str, why: str) -> list[dict[str, Any]]:
        return admin_find("Products", p.name, "Products") + [
            click("link", p.name, "I open the product's edit page."),
            type_in(role, field, value, why),
            click("button", "Save", "I save the product."),
            stop("", "The product is saved.")]

    w.template()
    for p in rng.sample(data.products, 2):
        new = f"{(p.price_cents + rng.choice([-300, 250, 500])) / 100:.2f}"
        add(template="Change the price of {{product}} to ${{price}}.", values={"product": p.name, "price": new},
            spec=page_shows((f"{ADMIN}/catalog/product/edit/{p.id}", "document.querySelector('#price').value",
                             {"exact_match": new})),
            plan=edit_product(p, "Price", "textbox", new, f"I set the price to {new}."))

    w.template()
    p = rng.choice(data.products)
    add(template="Disable the product {{product}}.", values={"product": p.name},
        spec=page_shows((f"{ADMIN}/catalog/product/edit/{p.id}", "document.querySelector('#status').value",
                         {"exact_match": "Disabled"})),
        plan=edit_product(p, "Status", "combobox", "Disabled", "I set its status to Disabled."))

    w.template()
    p = rng.choice([p for p in data.products if p.qty == 0])
    add(template="We received 50 units of {{product}}: set its stock quantity to 50.", values={"product": p.name},
        spec=page_shows((f"{ADMIN}/catalog/product/edit/{p.id}", "document.querySelector('#qty').value",
                         {"exact_match": "50"})),
        plan=edit_product(p, "Quantity", "textbox", "50", "I set the quantity to 50."))

    w.template()
    for o in rng.sample([o for o in data.orders if o.status in ("pending", "processing")], 2):
        add(template="Cancel the order {{order}}.", values={"order": o.increment},
            spec=page_shows((f"{ADMIN}/sales/order/view/{o.increment}",
                             "document.querySelector('#order-status').outerText", {"exact_match": "Canceled"})),
            plan=admin_find("Orders", o.increment, "Orders") + [
                click("link", o.increment, f"I open order {o.increment}."),
                click("button", "Cancel Order", "It is still open, so it can be canceled."),
                stop("", "The order is canceled.")])

    w.template()
    c = rng.choice(data.customers[1:])
    new_email = f"{c.first.lower()}.{c.last.lower()}@harbor-mail.net"
    add(template="Change the email address of the customer {{customer}} to {{email}}.",
        values={"customer": c.name, "email": new_email},
        spec=page_shows((f"{ADMIN}/customer/edit/{c.id}", "document.querySelector('#email').value",
                         {"exact_match": new_email})),
        plan=admin_find("Customers", c.name, "Customers") + [
            click("link", c.name, f"I open {c.name}'s page."),
            type_in("textbox", "Email", new_email, "I replace the email address."),
            click("button", "Save Customer", "I save the customer."), stop("", "The customer is saved.")])

    w.template()
    o = rng.choice(data.orders)
    add(template="Which customer placed the order {{order}}?", values={"order": o.increment},
        spec=strings(must_include=[customer_name[o.customer_id]], raw=customer_name[o.customer_id]),
        plan=admin_find("Orders", o.increment, "Orders") + [
            stop(customer_name[o.customer_id], f"The Bill-to Name of the order is {customer_name[o.customer_id]}.")])


def forum_tasks(w: TaskWriter, data: SeedData, rng: random.Random) -> None:
    def add(**kw: Any) -> None:
        w.add(sites=["reddit"], start=FORUM, **kw)

    n_comments = {p.id: sum(c.post_id == p.id for c in data.comments) for p in data.posts}
    w.template()
    for p in rng.sample(data.posts, 2):
        n = str(n_comments[p.id])
        add(template="How many comments does the post \"{{title}}\" have?", values={"title": p.title},
            spec=strings(must_include=[n], raw=n),
            plan=forum_post(p.forum, p.title) + [stop(n, f"The post has {n} comments.")])

    w.template()
    for p in rng.sample(data.posts, 2):
        add(template="Who submitted the post \"{{title}}\"?", values={"title": p.title},
            spec=strings(exact=p.author, raw=p.author),
            plan=forum_post(p.forum, p.title) + [stop(p.author, f"It was submitted by {p.author}.")])

    w.template()
    p = rng.choice(data.posts)
    add(template="How many points does the post \"{{title}}\" have?", values={"title": p.title},
        spec=strings(must_include=[str(p.score)], raw=str(p.score)),
        plan=forum_post(p.forum, p.title) + [stop(str(p.score), f"The post has {p.score} points.")])

    w.template()
    forum = "gardening"
    top = max((p for p in data.posts if p.forum == forum), key=lambda p: (p.score, -p.id))
    add(template="Which post of the {{forum}} forum has the most points?", values={"forum": forum},
        spec=strings(must_include=[top.title], raw=top.title),
        plan=[click("link", "Forums", "I open the list of forums."), click("link", forum, f"I open {forum}."),
              click("link", "Top", "Sorting by Top puts the post with the most points first."),
              stop(top.title, f"The first post is \"{top.title}\" with {top.score} points.")])

    w.template()
    for forum in ("movies", "cooking"):
        add(template="Open the {{forum}} forum.", values={"forum": forum}, spec=url_is(f"{FORUM}/f/{forum}"),
            plan=[click("link", "Forums", "I open the list of forums."), click("link", forum, f"I open {forum}."),
                  stop("", f"This is the {forum} forum.")])

    w.template()
    for p in rng.sample(data.posts, 2):
        add(template="Show me the post \"{{title}}\".", values={"title": p.title},
            spec=url_is(f"{FORUM}/f/{p.forum}/{p.id}"),
            plan=forum_post(p.forum, p.title) + [stop("", "The post is open.")])

    w.template()
    p = rng.choice([p for p in data.posts if p.author != FORUM_USERNAME])
    add(template="Show me the profile of the user who submitted \"{{title}}\".", values={"title": p.title},
        spec=url_is(f"{FORUM}/user/{p.author}"),
        plan=forum_post(p.forum, p.title) + [click("link", p.author, f"It was submitted by {p.author}; I open their profile."),
                                             stop("", "This is the submitter's profile.")])

    w.template()
    for forum, title, body in (("books", "Looking for a cozy mystery", "Any series with a small-town detective?"),
                               ("gadgets", "Which e-reader do you use?", "I read mostly at night and on trains.")):
        add(template="Post in the {{forum}} forum a submission titled \"{{title}}\" with the body \"{{body}}\".",
            values={"forum": forum, "title": title, "body": body}, login=True,
            spec=page_shows(("last", "document.querySelector('.post-title').outerText", {"exact_match": title}),
                            ("last", "document.querySelector('.post-body').outerText", {"must_include": [body]}),
                            (f"{FORUM}/f/{forum}", "", {"must_include": [title]})),
            plan=[click("link", "Submit", "I open the submission form."),
                  type_in("combobox", "Forum", forum, f"I choose the {forum} forum."),
                  type_in("textbox", "Title", title, "I give the title."),
                  type_in("textbox", "Body", body, "I write the body."),
                  click("button", "Create submission", "I submit the post."),
                  stop("", "The post is published.")])

    w.template()
    for p, text in zip(rng.sample(data.posts, 2), ("Thanks, this was really useful!", "I would love to read more about this."), strict=True):
        add(template="Reply to the post \"{{title}}\" with the comment \"{{comment}}\".",
            values={"title": p.title, "comment": text}, login=True,
            spec=page_shows((f"{FORUM}/f/{p.forum}/{p.id}", "document.querySelector('#comments').outerText",
                             {"must_include": [text]})),
            plan=forum_post(p.forum, p.title) + [
                type_in("textbox", "Comment", text, "I write the comment."),
                click("button", "Post comment", "I post it."), stop("", "The comment is posted.")])

    w.template()
    for p in rng.sample(data.posts, 2):
        add(template="Upvote the post \"{{title}}\".", values={"title": p.title}, login=True,
            spec=page_shows((f"{FORUM}/f/{p.forum}/{p.id}",
                             "document.querySelector('button.upvote').getAttribute('aria-pressed')",
                             {"exact_match": "true"})),
            plan=forum_post(p.forum, p.title) + [click("button", "Upvote", "I upvote it."),
                                                 stop("", "The post is upvoted.")])

    w.template()
    p = rng.choice(data.posts)
    add(template="Downvote the post \"{{title}}\".", values={"title": p.title}, login=True,
        spec=page_shows((f"{FORUM}/f/{p.forum}/{p.id}",
                         "document.querySelector('button.downvote').getAttribute('aria-pressed')",
                         {"exact_match": "true"})),
        plan=forum_post(p.forum, p.title) + [click("button", "Downvote", "I downvote it."),
                                             stop("", "The post is downvoted.")])


def wiki_tasks(w: TaskWriter, data: SeedData, rng: random.Random) -> None:
    def add(**kw: Any) -> None:
        w.add(sites=["wikipedia"], start=WIKI, **kw)

    def info(article: Any, key: str) -> str:
        return dict(article.infobox)[key]

    towns = [a for a in data.articles if a.kind == "town"]
    people = [a for a in data.articles if a.kind == "person"]
    rivers = [a for a in data.articles if a.kind == "river"]
    w.template()
    for town in rng.sample(towns, 2):
        year = info(town, "Founded")
        add(template="In which year was {{town}} founded?", values={"town": town.title},
            spec=strings(must_include=[year], raw=year),
            plan=wiki_article(town.title) + [stop(year, f"The article says {town.title} was founded in {year}.")])

    w.template()
    town = rng.choice(towns)
    population = info(town, "Population")
    add(template="What is the population of {{town}}?", values={"town": town.title},
        spec=strings(must_include=[population], raw=population),
        plan=wiki_article(town.title) + [stop(population, f"The infobox gives a population of {population}.")])

    w.template()
    for town in rng.sample(towns, 2):
        river = info(town, "River")
        add(template="Which river flows through {{town}}?", values={"town": town.title},
            spec=strings(must_include=[river], raw=river),
            plan=wiki_article(town.title) + [stop(river, f"{town.title} lies on the {river}.")])

    w.template()
    for person in rng.sample(people, 2):
        place = info(person, "Born").split(", ")[1]
        add(template="Where was {{person}} born?", values={"person": person.title},
            spec=strings(must_include=[place], raw=place),
            plan=wiki_article(person.title) + [stop(place, f"{person.title} was born in {place}.")])

    w.template()
    river = rng.choice(rivers)
    length = info(river, "Length")
    add(template="How long is the river {{river}}?", values={"river": river.title},
        spec=strings(must_include=[length.split()[0]], raw=length),
        plan=wiki_article(river.title) + [stop(length, f"The {river.title} is {length} long.")])

    w.template()
    for person in rng.sample(people, 2):
        add(template="Open the Almanac article about {{person}}.", values={"person": person.title},
            spec=url_is(f"{WIKI}/wiki/{quote(person.path)}"),
            plan=wiki_article(person.title) + [stop("", "The article is open.")])


def cross_site_tasks(w: TaskWriter, data: SeedData, rng: random.Random) -> None:
    w.template()
    for p in rng.sample(data.products, 2):
        town = dict(data.article(p.brand).infobox)["Headquarters"]
        w.add(sites=["shopping", "wikipedia"], start=f"{SHOP} |AND| {WIKI}",
              template="In which town is the company that makes {{product}} headquartered?", values={"product": p.name},
              spec=strings(must_include=[town], raw=town),
              plan=shop_search(p.name) + [
                  tab(1, f"The product page names its brand, {p.brand}; I look the company up in Almanac, open in tab 1."),
                  *wiki_article(p.brand),
                  stop(town, f"{p.brand} is headquartered in {town}.")])

    w.template()
    town = rng.choice([a for a in data.articles if a.kind == "town"])
    year = dict(town.infobox)["Founded"]
    title = f"{town.title} was founded in {year}"
    w.add(sites=["wikipedia", "reddit"], start=f"{WIKI} |AND| {FORUM}", login=True,
          template="Find in Almanac the year {{town}} was founded, then post in the hiking forum a submission titled "
                   "\"{{town}} was founded in <year>\" with the body \"Fact from Almanac.\"",
          values={"town": town.title},
          spec=page_shows(("last", "document.querySelector('.post-title').outerText", {"exact_match": title}),
                          (f"{FORUM}/f/hiking", "", {"must_include": [title]})),
          plan=wiki_article(town.title) + [
              tab(1, f"{town.title} was founded in {year}; the forum is open in tab 1."),
              click("link", "Submit", "I open the submission form."),
              type_in("combobox", "Forum", "hiking", "I choose the hiking forum."),
              type_in("textbox", "Title", title, "I give the title with the year."),
              type_in("textbox", "Body", "Fact from Almanac.", "I write the body."),
              click("button", "Create submission", "I submit the post."),
              stop("", "The post is published.")])


def bundled_tasks() -> list[dict[str, Any]]:
    """Every bundled task as a WebArena config (with ``expert`` and ``split``)."""
    data, rng, writer = seed_data(), random.Random(SEED + 7), TaskWriter()
    for make in (shop_tasks, admin_tasks, forum_tasks, wiki_tasks, cross_site_tasks):
        make(writer, data, rng)
    return writer.configs()


def main() -> None:
    tasks = bundled_tasks()
    TASKS_FILE.write_text(json.dumps(tasks, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(tasks)} tasks to {TASKS_FILE}", file=sys.stderr)


if __name__ == "__main__":
    main()
