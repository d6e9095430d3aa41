"""Threadbare, the forum (WebArena's ``__REDDIT__``, a Postmill in the original): forums of posts, each
with comments and votes; submitting, commenting and voting need a logged-in user."""

from __future__ import annotations

import sqlite3
from urllib.parse import urlencode

from fastapi import Request
from fastapi.responses import HTMLResponse, Response

from .seed import slugify
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
    textarea,
)

COOKIE = "forum_session"
COLOR = "#8b3a1f"
POSTS = ("SELECT p.*, p.base_score + COALESCE((SELECT SUM(value) FROM votes v WHERE v.post_id = p.id), 0) AS score, "
         "(SELECT COUNT(*) FROM comments c WHERE c.post_id = p.id) AS n_comments FROM posts p")


def post_url(row: sqlite3.Row) -> str:
    return f"/f/{row['forum']}/{row['id']}/{slugify(row['title'])}"


def post_summary(row: sqlite3.Row) -> str:
    comments = f"{row['n_comments']} comment" + ("" if row["n_comments"] == 1 else "s")
    return (f"<article class='submission'><h2>{link(post_url(row), row['title'])}</h2>"
            f"<p>Submitted by {link('/user/' + row['author'], row['author'])} in {link('/f/' + row['forum'], row['forum'])} "
            f"on {e(row['created'])}</p><p>{row['score']} points, {link(post_url(row), comments)}</p></article>")


def build(store: Store, control_token: str) -> Site:
    site = Site("forum", store, control_token)
    app = site.app

    def header(user: str | None) -> str:
        account = (link(f"/user/{user}", user) + " " + link("/logout", "Log out")) if user else link("/login", "Log in")
        return (f"<strong>{link('/', 'Threadbare')}</strong><nav aria-label='Site'>{link('/forums', 'Forums')} "
                f"{link('/submit', 'Submit')}</nav>{account}")

    def render(request: Request, db: sqlite3.Connection, title: str, body: str) -> HTMLResponse:
        return page(title, body, header=header(site.user(request, COOKIE)), color=COLOR)

    def missing(request: Request, db: sqlite3.Connection, what: str) -> HTMLResponse:
        return not_found(what, header=header(site.user(request, COOKIE)), color=COLOR)

    @app.get("/")
    async def front(request: Request) -> Response:
        db = site.db(request)
        rows = db.execute(POSTS + " ORDER BY score DESC, p.id LIMIT 10").fetchall()
        body = "<h1>Top posts</h1>" + "".join(post_summary(r) for r in rows)
        return render(request, db, "Threadbare", body)

    @app.get("/forums")
    async def forums(request: Request) -> Response:
        db = site.db(request)
        rows = db.execute("SELECT f.name, f.description, (SELECT COUNT(*) FROM posts p WHERE p.forum = f.name) AS n "
                          "FROM forums f ORDER BY f.name").fetchall()
        items = "".join(f"<li>{link('/f/' + r['name'], r['name'])}: {e(r['description'])} ({r['n']} posts)</li>"
                        for r in rows)
        return render(request, db, "Forums", f"<h1>Forums</h1><ul>{items}</ul>")

    @app.get("/f/{forum}")
    async def forum(request: Request, forum: str, sort: str = "new") -> Response:
        db = site.db(request)
        about = db.execute("SELECT * FROM forums WHERE name = ?", (forum,)).fetchone()
        if about is None:
            return missing(request, db, f"There is no forum {forum}.")
        order = "score DESC, p.id" if sort == "top" else "p.created DESC, p.id DESC"
        rows = db.execute(POSTS + f" WHERE p.forum = ? ORDER BY {order}", (forum,)).fetchall()
        sorting = link(f"/f/{forum}", "New") + " " + link(f"/f/{forum}?sort=top", "Top")
        body = (f"<h1>{e(forum)}</h1><p>{e(about['description'])}</p><p>Sort by: {sorting}</p>"
                + ("".join(post_summary(r) for r in rows) or "<p>No posts yet.</p>"))
        return render(request, db, forum, body)

    def find_post(db: sqlite3.Connection, forum: str, post_id: int) -> sqlite3.Row | None:
        return db.execute(POSTS + " WHERE p.id = ? AND p.forum = ?", (post_id, forum)).fetchone()

    @app.get("/f/{forum}/{post_id}")
    @app.get("/f/{forum}/{post_id}/{slug}")
    async def post(request: Request, forum: str, post_id: int, slug: str = "", message: str = "") -> Response:
        db = site.db(request)
        p = find_post(db, forum, post_id)
        if p is None:
            return missing(request, db, "This post does not exist.")
        user = site.user(request, COOKIE)
        mine = db.execute("SELECT value FROM votes WHERE post_id = ? AND user = ?", (post_id, user)).fetchone()
        vote = mine[0] if mine else 0
        comments = db.execute("SELECT * FROM comments WHERE post_id = ? ORDER BY id", (post_id,)).fetchall()
        listed = "".join(
            f"<article class='comment'><p>{link('/user/' + c['author'], c['author'])} on {e(c['created'])}</p>"
            f"<p>{e(c['body'])}</p></article>" for c in comments
        ) or "<p>No comments yet.</p>"
        notice = f"<p class='message' role='status'>{e(message)}</p>" if message else ""
        base = f"/f/{forum}/{post_id}"
        body = (
            f"{notice}<h1 class='post-title'>{e(p['title'])}</h1>"
            f"<p>Submitted by {link('/user/' + p['author'], p['author'])} in {link('/f/' + forum, forum)} on {e(p['created'])}</p>"
            f"<div class='post-body'><p>{e(p['body'])}</p></div>"
            f"<p><span class='score'>{p['score']}</span> points "
            + button_form(f"{base}/vote?{urlencode({'direction': 'up'})}", "Upvote", aria_pressed=str(vote > 0).lower(),
                          **{"class": "upvote"})
            + button_form(f"{base}/vote?{urlencode({'direction': 'down'})}", "Downvote",
                          aria_pressed=str(vote < 0).lower(), **{"class": "downvote"})
            + f"</p><h2>{len(comments)} comments</h2><div id='comments'>{listed}</div>"
            + f"<form method='post' action='{base}/comment'>" + textarea("Comment", "body")
            + "<p><button type='submit'>Post comment</button></p></form>"
        )
        return render(request, db, p["title"], body)

    @app.post("/f/{forum}/{post_id}/vote")
    async def vote(request: Request, forum: str, post_id: int, direction: str = "up") -> Response:
        db = site.db(request)
        user = site.user(request, COOKIE)
        p = find_post(db, forum, post_id)
        if p is None:
            return missing(request, db, "This post does not exist.")
        if user is None:
            return login_redirect("/login", post_url(p))
        value = 1 if direction == "up" else -1
        current = db.execute("SELECT value FROM votes WHERE post_id = ? AND user = ?", (post_id, user)).fetchone()
        if current and current[0] == value:  # voting the same way again takes the vote back
            db.execute("DELETE FROM votes WHERE post_id = ? AND user = ?", (post_id, user))
        else:
            db.execute("INSERT OR REPLACE INTO votes VALUES (?, ?, ?)", (post_id, user, value))
        return redirect(post_url(p))

    @app.post("/f/{forum}/{post_id}/comment")
    async def comment(request: Request, forum: str, post_id: int) -> Response:
        db = site.db(request)
        user = site.user(request, COOKIE)
        p = find_post(db, forum, post_id)
        if p is None:
            return missing(request, db, "This post does not exist.")
        if user is None:
            return login_redirect("/login", post_url(p))
        text = (await form_data(request)).get("body", "").strip()
        if not text:
            return redirect(post_url(p) + "?" + urlencode({"message": "A comment cannot be empty."}))
        db.execute("INSERT INTO comments (post_id, author, body, created) VALUES (?, ?, ?, ?)",
                   (post_id, user, text, "2024-03-01"))
        return redirect(post_url(p) + "?" + urlencode({"message": "Your comment was posted."}))

    @app.get("/submit")
    async def submit_page(request: Request, forum: str = "", error: str = "") -> Response:
        db = site.db(request)
        if site.user(request, COOKIE) is None:
            return login_redirect("/login", "/submit")
        names = [r[0] for r in db.execute("SELECT name FROM forums ORDER BY name")]
        problem = f"<p class='error' role='alert'>{e(error)}</p>" if error else ""
        body = (f"<h1>Create submission</h1>{problem}<form method='post' action='/submit'>"
                + select("Forum", "forum", names, forum) + field("Title", "title") + textarea("Body", "body")
                + "<p><button type='submit'>Create submission</button></p></form>")
        return render(request, db, "Create submission", body)

    @app.post("/submit")
    async def submit(request: Request) -> Response:
        db = site.db(request)
        user = site.user(request, COOKIE)
        if user is None:
            return login_redirect("/login", "/submit")
        form = await form_data(request)
        forum_name, title, text = form.get("forum", ""), form.get("title", "").strip(), form.get("body", "").strip()
        if db.execute("SELECT 1 FROM forums WHERE name = ?", (forum_name,)).fetchone() is None or not title:
            return redirect("/submit?" + urlencode({"error": "Choose a forum and give a title."}))
        post_id = db.execute("INSERT INTO posts (forum, title, body, author, created, base_score) VALUES (?,?,?,?,?,?)",
                             (forum_name, title, text, user, "2024-03-01", 1)).lastrowid
        return redirect(f"/f/{forum_name}/{post_id}/{slugify(title)}")

    @app.get("/login")
    async def login_page(request: Request, next: str = "", failed: int = 0) -> Response:  # noqa: A002
        db = site.db(request)
        error = "<p class='error' role='alert'>Invalid credentials.</p>" if failed else ""
        body = (f"<h1>Log in</h1>{error}<form method='post' action='/login'><input type='hidden' name='next' "
                f"value='{e(next)}'>" + field("Username", "username") + field("Password", "password", kind="password")
                + "<p><button type='submit'>Log in</button></p></form>")
        return render(request, db, "Log in", body)

    @app.post("/login")
    async def login(request: Request) -> Response:
        return await site.sign_in(request, query="SELECT name FROM users WHERE name = ? AND password = ?",
                                  name_field="username", cookie=COOKIE, login_path="/login", home="/")

    @app.get("/logout")
    async def logout(request: Request) -> Response:
        return site.logged_out(request, redirect("/"), COOKIE)

    @app.get("/user/{name}")
    async def user_page(request: Request, name: str) -> Response:
        db = site.db(request)
        if db.execute("SELECT 1 FROM users WHERE name = ?", (name,)).fetchone() is None:
            return missing(request, db, f"There is no user {name}.")
        rows = db.execute(POSTS + " WHERE p.author = ? ORDER BY p.created DESC", (name,)).fetchall()
        n_comments = db.execute("SELECT COUNT(*) FROM comments WHERE author = ?", (name,)).fetchone()[0]
        body = (f"<h1>{e(name)}</h1><p>{len(rows)} submissions, {n_comments} comments</p>"
                + "".join(post_summary(r) for r in rows))
        return render(request, db, name, body)

    return site
