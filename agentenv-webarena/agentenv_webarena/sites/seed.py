"""The seeded data of the bundled sites: a shop's catalog, customers and orders; a forum's posts, comments
and votes; a wiki's articles.

Everything is drawn from one ``random.Random(SEED)`` over word lists written here, so every process builds
the same data: the sites load it into a fresh database per task, and the task generator
(:mod:`agentenv_webarena.taskgen`) reads the same values to write reference answers.
"""

from __future__ import annotations

import functools
import random
import re
from dataclasses import dataclass, field

SEED = 20240917

# --- the shop -----------------------------------------------------------------------------------------

CATEGORIES: dict[str, list[str]] = {
    "Grocery": [
        "Rolled Oats", "Wildflower Honey", "Sea Salt Crackers", "Dark Roast Coffee Beans", "Green Tea Sachets",
        "Maple Granola", "Basmati Rice",
    ],
    "Kitchen": [
        "Cast Iron Skillet", "Chef Knife", "Bamboo Cutting Board", "Glass Storage Jars", "Silicone Spatula Set",
        "French Press", "Enamel Dutch Oven",
    ],
    "Electronics": [
        "Wireless Earbuds", "USB-C Charging Cable", "Bluetooth Speaker", "Portable Power Bank",
        "Mechanical Keyboard", "HD Webcam", "Smart Plug",
    ],
    "Outdoor": [
        "Trekking Poles", "Insulated Water Bottle", "Camping Lantern", "Two-Person Tent", "Hiking Daypack",
        "Folding Camp Chair", "Rain Poncho",
    ],
    "Books": [
        "River Atlas", "Short History of Tea", "Practical Woodworking", "Night Birds of the Coast",
        "Cooking with Cast Iron", "Quiet Orchard", "Stars over the Bay",
    ],
    "Toys": [
        "Wooden Train Set", "Puzzle Cube", "Plush Otter", "Kite Kit", "Building Blocks Tub", "Watercolor Set",
        "Marble Run",
    ],
}
PRICE_RANGES = {
    "Grocery": (3, 25), "Kitchen": (12, 140), "Electronics": (9, 160), "Outdoor": (15, 220),
    "Books": (8, 40), "Toys": (6, 70),
}
#: brands, each with a wiki article (founded, headquarters town, founder)
BRANDS = ["Northwind", "Larkspur", "Copperline", "Bluefin", "Oakhaven", "Tidewater"]

REVIEW_TITLES = {
    5: ["Excellent", "Love it", "Worth every penny", "Best purchase this year"],
    4: ["Very good", "Solid choice", "Happy with it", "Does the job well"],
    3: ["It's okay", "Average", "Mixed feelings", "Fine for the price"],
    2: ["Disappointing", "Not great", "Expected more"],
    1: ["Broke quickly", "Would not buy again", "Poor quality"],
}
REVIEW_TEXTS = {
    5: ["Exactly as described and arrived quickly.", "Great quality, I use it every day.",
        "My whole family likes it."],
    4: ["Good value, small flaws but nothing serious.", "Works well, the packaging could be better."],
    3: ["Does what it says, nothing more.", "Okay, but I have seen better elsewhere."],
    2: ["The finish wore off after a few weeks.", "Smaller than it looks in the pictures."],
    1: ["Stopped working after two days.", "Arrived damaged and support was slow."],
}
NICKNAMES = ["Marta", "jdoe", "Priya K.", "Sam", "Lou", "Oskar", "Hana", "Theo", "Rafa", "Ines", "Gus", "Yara"]

FIRST_NAMES = [
    "Nora", "Elias", "Mira", "Jonah", "Leila", "Victor", "Ava", "Tomas", "Greta", "Omar", "Lucia", "Felix",
    "Irene", "Caleb", "Sofia", "Arjun",
]
LAST_NAMES = [
    "Winters", "Okafor", "Lindqvist", "Brandt", "Haddad", "Moreau", "Castillo", "Novak", "Berg", "Farah",
    "Romano", "Keller", "Duarte", "Whitfield", "Petrov", "Mehta",
]
ORDER_STATUSES = ["pending", "processing", "complete", "complete", "complete", "canceled"]
SHIPPING_CENTS = 500

#: the storefront customer the shop's tasks are logged in as, and the admin panel's user
SHOP_CUSTOMER_EMAIL = "nora.winters@example.com"
SHOP_CUSTOMER_PASSWORD = "Harbor#2024"
ADMIN_USERNAME = "admin"
ADMIN_PASSWORD = "admin1234"

# --- the forum ----------------------------------------------------------------------------------------

FORUMS: dict[str, tuple[str, list[str]]] = {
    "books": ("Books and reading", [
        "What are you reading this month?", "Underrated novels from the 1970s", "Do you annotate your books?",
        "Best translated fiction you have read", "Library sale haul", "Audiobooks for long drives",
    ]),
    "cooking": ("Recipes and kitchen talk", [
        "My first sourdough loaf", "How do you season cast iron?", "Weeknight dinners under 30 minutes",
        "Favourite soup for cold evenings", "Knife sharpening tips", "Is a stand mixer worth it?",
    ]),
    "hiking": ("Trails, gear and trip reports", [
        "Trip report: the ridge loop above Eldermoor", "Trekking poles: yes or no?", "Lightweight tents compared",
        "Blisters and how to avoid them", "Best trails near Stonebridge", "Hiking in the rain",
    ]),
    "gadgets": ("Phones, audio and everything that beeps", [
        "Wireless earbuds that survive the gym", "Mechanical keyboard switch guide", "Power banks for travel",
        "Smart plugs: useful or gimmick?", "Webcam recommendations for calls", "Cable management ideas",
    ]),
    "gardening": ("Vegetable beds, balconies and orchards", [
        "Tomatoes splitting on the vine", "Balcony herb garden setup", "When to prune apple trees",
        "Composting in a small flat", "Slugs ate my lettuce", "Seed swap this spring",
    ]),
    "movies": ("Films, old and new", [
        "Films that got better on a second watch", "Best film scores of the decade", "Documentaries worth your time",
        "Silent films for beginners", "Overrated classics?", "Cinemas with the best seats",
    ]),
}
FORUM_USERS = [
    "quietriver", "maplefox", "tinkerbell42", "dunewalker", "pixelpoet", "saltmarsh", "ironkettle",
    "moonlitfern", "breadcrumbs", "northstar88", "lazyotter", "copperleaf",
]
#: the forum user the forum's tasks are logged in as
FORUM_USERNAME = "quietriver"
FORUM_PASSWORD = "Quiet#River9"
POST_SENTENCES = [
    "I have been thinking about this for a while and wanted to hear other opinions.",
    "Curious what this community thinks.", "Here is what worked for me so far.",
    "Any advice is welcome, I am still learning.", "Pictures in the comments if anyone is interested.",
    "This came up in a conversation last weekend.", "Please share your own experience below.",
]
COMMENT_TEXTS = [
    "Great post, thanks for sharing!", "I had the same problem last year.", "Totally agree with this.",
    "Have you tried doing it the other way round?", "This is really helpful.", "Not sure I agree, but interesting.",
    "Saving this for later.", "Could you post an update?", "Same here!", "Thanks, this answered my question.",
]

# --- the wiki -----------------------------------------------------------------------------------------

TOWNS = ["Harbor Bay", "Eldermoor", "Stonebridge", "Willowmere", "Ravensholt", "Brightwater", "Fennick", "Marrowdale"]
RIVERS = ["Silverrun", "Ashwater", "Kestrel River", "Tamsin", "Greyford River"]
REGIONS = ["Northern Reach", "Lowmarch", "Westvale"]
PEOPLE = [
    ("Ada Fenwick", "botanist"), ("Bruno Calder", "engineer"), ("Clara Ostrova", "astronomer"),
    ("Desmond Hale", "composer"), ("Elin Marsh", "cartographer"), ("Fabian Roux", "architect"),
]


@dataclass
class Product:
    id: int
    sku: str
    slug: str
    name: str
    brand: str
    category: str
    price_cents: int
    qty: int
    enabled: bool
    description: str


@dataclass
class Review:
    product_id: int
    nickname: str
    rating: int
    title: str
    text: str
    created: str


@dataclass
class Customer:
    id: int
    first: str
    last: str
    email: str
    city: str
    phone: str

    @property
    def name(self) -> str:
        return f"{self.first} {self.last}"


@dataclass
class OrderItem:
    product_id: int
    name: str
    price_cents: int
    qty: int


@dataclass
class Order:
    id: int
    increment: str
    customer_id: int
    created: str
    status: str
    items: list[OrderItem]

    @property
    def subtotal_cents(self) -> int:
        return sum(item.price_cents * item.qty for item in self.items)

    @property
    def total_cents(self) -> int:
        return self.subtotal_cents + SHIPPING_CENTS


@dataclass
class Post:
    id: int
    forum: str
    title: str
    body: str
    author: str
    created: str
    score: int

    @property
    def slug(self) -> str:
        return slugify(self.title)


@dataclass
class Comment:
    post_id: int
    author: str
    body: str
    created: str


@dataclass
class Article:
    title: str
    kind: str
    summary: str
    infobox: list[tuple[str, str]]
    sections: list[tuple[str, str]] = field(default_factory=list)

    @property
    def path(self) -> str:
        return self.title.replace(" ", "_")


@dataclass
class SeedData:
    products: list[Product]
    reviews: list[Review]
    customers: list[Customer]
    orders: list[Order]
    posts: list[Post]
    comments: list[Comment]
    articles: list[Article]

    def product(self, name: str) -> Product:
        return next(p for p in self.products if p.name == name)

    def customer(self, customer_id: int) -> Customer:
        return next(c for c in self.customers if c.id == customer_id)

    def article(self, title: str) -> Article:
        return next(a for a in self.articles if a.title == title)


def slugify(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def money(cents: int) -> str:
    return f"${cents / 100:,.2f}"


def _date(rng: random.Random, year: int) -> str:
    return f"{year}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"


@functools.cache
def seed_data() -> SeedData:
    """The bundled sites' data (the same in every process)."""
    rng = random.Random(SEED)
    products: list[Product] = []
    for category, items in CATEGORIES.items():
        for item in items:
            pid = len(products) + 1
            brand = BRANDS[(pid * 5) % len(BRANDS)]
            name = f"{brand} {item}"
            low, high = PRICE_RANGES[category]
            price = rng.randint(low * 100, high * 100) // 50 * 50 - rng.choice([1, 1, 51, 0])
            products.append(Product(
                id=pid, sku=f"HM-{1000 + pid}", slug=slugify(name), name=name, brand=brand, category=category,
                price_cents=max(price, 99), qty=rng.choice([0, 3, 7, 12, 25, 40, 64, 88, 120]), enabled=True,
                description=f"{name}: a {category.lower()} favourite from {brand}. "
                + rng.choice(["Made to last.", "Customers' choice.", "New this season.", "A classic design."]),
            ))
    reviews: list[Review] = []
    for product in products:
        for _ in range(rng.choice([0, 1, 2, 2, 3, 4, 5])):
            rating = rng.choice([5, 5, 4, 4, 4, 3, 2, 1])
            reviews.append(Review(
                product.id, rng.choice(NICKNAMES), rating, rng.choice(REVIEW_TITLES[rating]),
                rng.choice(REVIEW_TEXTS[rating]), _date(rng, 2023),
            ))
    customers = [
        Customer(i + 1, first, last, f"{first.lower()}.{last.lower()}@example.com",
                 rng.choice(TOWNS), f"555-{rng.randint(1000, 9999)}")
        for i, (first, last) in enumerate(zip(FIRST_NAMES, LAST_NAMES, strict=True))
    ]
    orders: list[Order] = []
    for i in range(40):
        customer = 1 if i % 6 == 0 else rng.randint(1, len(customers))
        chosen = rng.sample(products, rng.randint(1, 3))
        items = [OrderItem(p.id, p.name, p.price_cents, rng.randint(1, 3)) for p in chosen]
        orders.append(Order(
            i + 1, f"{i + 101:09d}", customer, f"2023-{1 + i * 11 // 40:02d}-{1 + (i * 7) % 28:02d}",
            rng.choice(ORDER_STATUSES), items,
        ))
    posts: list[Post] = []
    comments: list[Comment] = []
    for forum, (_, titles) in FORUMS.items():
        for title in titles:
            pid = len(posts) + 1
            author = FORUM_USERS[1 + rng.randrange(len(FORUM_USERS) - 1)] if pid % 9 else FORUM_USERNAME
            body = " ".join(rng.sample(POST_SENTENCES, 2))
            posts.append(Post(pid, forum, title, body, author, _date(rng, 2023), rng.randint(0, 80)))
            for _ in range(rng.choice([0, 1, 2, 3, 4, 5, 6])):
                comments.append(Comment(
                    pid, rng.choice([u for u in FORUM_USERS if u != author]), rng.choice(COMMENT_TEXTS),
                    _date(rng, 2023),
                ))
    return SeedData(products, reviews, customers, orders, posts, comments, _articles(rng))


def _articles(rng: random.Random) -> list[Article]:
    articles: list[Article] = []
    river_of = {town: RIVERS[i % len(RIVERS)] for i, town in enumerate(TOWNS)}
    for i, town in enumerate(TOWNS):
        founded, population = rng.randint(1150, 1890), rng.randint(2, 240) * 1000 + rng.randint(0, 999)
        region, elevation = REGIONS[i % len(REGIONS)], rng.randint(4, 900)
        articles.append(Article(
            town, "town",
            f"{town} is a town in the {region}, on the banks of the {river_of[town]}. It was founded in {founded}.",
            [("Region", region), ("Founded", str(founded)), ("Population", f"{population:,}"),
             ("Elevation", f"{elevation} m"), ("River", river_of[town])],
            [("History", f"The first settlement at {town} grew around a ford of the {river_of[town]}. "
                         f"It received its town charter in {founded + rng.randint(20, 90)}."),
             ("Economy", f"Today {town} is known for its {rng.choice(['markets', 'mills', 'harbour', 'orchards'])}.")],
        ))
    for i, river in enumerate(RIVERS):
        towns = [t for t in TOWNS if river_of[t] == river]
        length = rng.randint(40, 620)
        articles.append(Article(
            river, "river",
            f"The {river} is a river of the {REGIONS[i % len(REGIONS)]}, {length} km long.",
            [("Length", f"{length} km"), ("Source", rng.choice(['Mount Carrow', 'the Fell Lakes', 'Brackenmoss']))],
            [("Course", "It flows past " + ", ".join(towns) + " before reaching the sea.")],
        ))
    born_in: dict[str, int] = {}
    for name, job in PEOPLE:
        born = born_in[name] = rng.randint(1820, 1960)
        birthplace = rng.choice(TOWNS)
        articles.append(Article(
            name, "person", f"{name} ({born}–{born + rng.randint(55, 92)}) was a {job} born in {birthplace}.",
            [("Born", f"{born}, {birthplace}"), ("Occupation", job.capitalize())],
            [("Life", f"{name.split()[0]} studied in {rng.choice(TOWNS)} and worked as a {job} for most of "
                      "their life.")],
        ))
    for i, brand in enumerate(BRANDS):
        founder = PEOPLE[i % len(PEOPLE)][0]
        founded, town = born_in[founder] + rng.randint(25, 50), rng.choice(TOWNS)
        articles.append(Article(
            brand, "company",
            f"{brand} is a maker of household and outdoor goods, founded in {founded} by {founder}.",
            [("Founded", str(founded)), ("Founder", founder), ("Headquarters", town)],
            [("History", f"{brand} began as a small workshop in {town}.")],
        ))
    return articles
