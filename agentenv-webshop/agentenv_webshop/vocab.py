"""The words the catalog is generated from: WebShop's five top categories, their product types, and the
pools of attributes, option values, materials and sizes listings of each type draw on.

A :class:`ProductType` is one kind of product (``peanut butter``, ``women's running shoe``): the search
query it was "scraped" with (WebShop's ``query`` field), its ``›`` category path, what its titles say and
what its buyers may ask for.  The words are written here; which ones a product gets is drawn by
:mod:`agentenv_webshop.catalog` from a seeded generator.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ProductType:
    """One kind of product and the vocabulary its listings are written from."""

    #: the noun phrase titles and goals use (``"peanut butter"``)
    name: str
    #: WebShop's ``query``: the search the product was found by
    query: str
    #: the category path below the top category, joined with `` › `` on the page
    path: tuple[str, ...]
    #: words put before the name in a title: materials, styles, kinds (``"creamy"``, ``"stainless steel"``)
    descriptors: tuple[str, ...]
    #: attribute phrases a listing claims and a goal may require (WebShop's ``attributes``)
    attributes: tuple[str, ...]
    #: option group -> the pool its values are drawn from (a pool name of :data:`OPTION_POOLS`, or values)
    options: dict[str, str | tuple[str, ...]]
    #: size or pack phrases a title may end with
    sizes: tuple[str, ...]
    #: the price band of the type, in dollars
    price: tuple[float, float]
    #: what the product is for (``"for dry hair"``), put after the name in some titles
    uses: tuple[str, ...] = ()
    #: the top category (set by :data:`CATEGORIES`)
    category: str = field(default="", compare=False)


#: shared option pools: colours, sizes, flavours, scents, counts
OPTION_POOLS: dict[str, tuple[str, ...]] = {
    "color": (
        "black", "white", "navy blue", "grey", "charcoal", "beige", "brown", "red", "burgundy", "pink",
        "blush pink", "purple", "lavender", "blue", "light blue", "teal", "green", "olive green", "sage green",
        "yellow", "mustard", "orange", "coral", "khaki", "ivory", "silver", "gold", "rose gold", "multicolor",
        "black | white", "leopard", "camouflage",
    ),
    "apparel size": ("x-small", "small", "medium", "large", "x-large", "xx-large", "3x-large"),
    "shoe size": ("6", "6.5", "7", "7.5", "8", "8.5", "9", "9.5", "10", "10.5", "11", "12", "13"),
    "kids size": ("2t", "3t", "4t", "5", "6", "7", "8", "10", "12"),
    "flavor": (
        "original", "chocolate", "vanilla", "strawberry", "peanut butter", "caramel", "honey", "sea salt",
        "cinnamon", "mint", "lemon", "mixed berry", "coconut", "mango", "dark chocolate", "salted caramel",
        "maple", "blueberry", "cherry", "unflavored",
    ),
    "scent": (
        "unscented", "lavender", "eucalyptus", "citrus", "coconut", "vanilla", "rose", "sandalwood",
        "fresh linen", "tea tree", "ocean breeze", "cucumber melon", "bright citrus", "mint",
    ),
    "count": ("pack of 1", "pack of 2", "pack of 3", "pack of 4", "pack of 6", "pack of 12", "pack of 24"),
    "wood finish": ("natural", "walnut", "espresso", "white oak", "rustic brown", "black", "grey wash", "cherry"),
    "capacity": ("32gb", "64gb", "128gb", "256gb", "512gb", "1tb", "2tb"),
    "length": ("3 ft", "6 ft", "10 ft", "15 ft"),
    "weight": ("8 ounce", "12 ounce", "16 ounce", "1 pound", "2 pound", "5 pound"),
    "volume": ("1 fl oz", "2 fl oz", "3.4 fl oz", "8 fl oz", "12 fl oz", "16 fl oz", "33.8 fl oz"),
    "bed size": ("twin", "full", "queen", "king", "california king"),
    "style": ("modern", "classic", "vintage", "minimalist", "farmhouse", "boho", "industrial"),
}


def _types(category: str, *types: ProductType) -> tuple[ProductType, ...]:
    return tuple(ProductType(**{**t.__dict__, "category": category}) for t in types)


T = ProductType

BEAUTY = _types(
    "beauty",
    T("shampoo", "shampoo", ("Beauty & Personal Care", "Hair Care", "Shampoo & Conditioner", "Shampoos"),
      ("argan oil", "tea tree", "biotin", "coconut milk", "charcoal", "rosemary mint", "keratin"),
      ("sulfate free", "paraben free", "cruelty free", "natural ingredients", "dry hair", "hair growth",
       "color treated hair", "long lasting"),
      {"scent": "scent", "size": "volume"}, ("8 fl oz", "13.5 fl oz", "16 fl oz", "33.8 fl oz"), (6, 38),
      ("for dry damaged hair", "for thinning hair", "for curly hair", "for men and women")),
    T("hair extension", "hair extensions", ("Beauty & Personal Care", "Hair Care", "Hair Extensions, Wigs & Accessories", "Extensions"),
      ("clip in", "tape in", "human hair", "synthetic", "wavy", "straight", "ombre"),
      ("natural looking", "easy to use", "high quality", "long lasting", "heat resistant", "hair loss"),
      {"color": ("jet black", "natural black", "dark brown", "light brown", "ash blonde", "honey blonde", "platinum blonde", "auburn"),
       "size": ("14 inch", "16 inch", "18 inch", "20 inch", "22 inch", "24 inch")},
      ("7 pieces", "10 pieces", "120 grams"), (12, 90), ("for women", "for thick hair")),
    T("face moisturizer", "face moisturizer", ("Beauty & Personal Care", "Skin Care", "Face", "Creams & Moisturizers", "Face Moisturizers"),
      ("hyaluronic acid", "vitamin c", "retinol", "niacinamide", "oil free", "aloe vera", "ceramide"),
      ("sensitive skin", "fine lines", "dark spots", "fragrance free", "non greasy", "dry skin", "anti aging",
       "dermatologist tested"),
      {"size": ("1 fl oz", "1.7 fl oz", "2.5 fl oz", "3.4 fl oz")},
      ("1.7 oz", "2 oz", "50 ml"), (9, 65), ("for oily skin", "for all skin types", "for day and night")),
    T("lipstick", "lipstick", ("Beauty & Personal Care", "Makeup", "Lips", "Lipstick"),
      ("matte", "satin", "liquid", "velvet", "glossy", "tinted"),
      ("long lasting", "cruelty free", "highly pigmented", "non drying", "waterproof", "vegan"),
      {"color": ("nude", "berry", "ruby red", "coral", "mauve", "rose", "plum", "classic red", "pink nude")},
      ("0.12 oz", "0.15 oz", "3 count"), (5, 32), ("for women",)),
    T("nail polish", "nail polish", ("Beauty & Personal Care", "Foot, Hand & Nail Care", "Nail Art & Polish", "Nail Polish"),
      ("gel", "quick dry", "glitter", "chrome", "pastel", "neon"),
      ("long lasting", "non toxic", "easy to use", "high gloss", "chip resistant", "salon quality"),
      {"color": "color", "count": ("1 count", "6 count", "12 count")},
      ("0.5 fl oz", "15 ml", "set of 6"), (4, 29), ()),
    T("deodorant", "deodorant", ("Beauty & Personal Care", "Personal Care", "Deodorants & Antiperspirants", "Deodorant"),
      ("aluminum free", "natural", "clinical strength", "stick", "spray", "roll on"),
      ("sensitive skin", "long lasting", "aluminum free", "baking soda free", "paraben free", "24 hour"),
      {"scent": "scent", "count": "count"}, ("2.6 oz", "3 ounce", "2.7 oz"), (5, 24), ("for men", "for women")),
    T("makeup brush set", "makeup brushes", ("Beauty & Personal Care", "Tools & Accessories", "Makeup Brushes & Tools", "Brush Sets"),
      ("synthetic", "vegan", "kabuki", "professional", "travel", "bamboo"),
      ("easy to clean", "high quality", "soft bristles", "travel friendly", "cruelty free", "foundation brush"),
      {"color": ("black", "rose gold", "white", "pink", "champagne gold"), "count": ("10 pieces", "14 pieces", "18 pieces")},
      ("10 pcs", "15 pcs", "with case"), (8, 45), ("for foundation and powder",)),
    T("perfume", "perfume", ("Beauty & Personal Care", "Fragrance", "Women's", "Eau de Parfum"),
      ("floral", "woody", "fresh", "oriental", "citrus", "musk"),
      ("long lasting", "travel size", "gift set", "natural spray", "alcohol free"),
      {"size": ("1 fl oz", "1.7 fl oz", "3.4 fl oz")}, ("1.7 fl oz", "3.4 fl oz", "100 ml"), (15, 120),
      ("for women", "for men")),
    T("body wash", "body wash", ("Beauty & Personal Care", "Personal Care", "Bath & Bathing Accessories", "Body Washes"),
      ("moisturizing", "exfoliating", "shea butter", "oatmeal", "charcoal", "goat milk"),
      ("sensitive skin", "dry skin", "paraben free", "natural ingredients", "hypoallergenic", "sulfate free"),
      {"scent": "scent", "size": "volume"}, ("16 fl oz", "18 fl oz", "22 fl oz"), (5, 28), ("for men", "for women")),
    T("sunscreen", "sunscreen", ("Beauty & Personal Care", "Skin Care", "Sunscreens & Tanning Products", "Sunscreens"),
      ("mineral", "zinc oxide", "spf 30", "spf 50", "tinted", "sport"),
      ("water resistant", "reef safe", "broad spectrum", "oil free", "sensitive skin", "non greasy"),
      {"size": ("1.7 fl oz", "3 fl oz", "5 fl oz", "8 fl oz")}, ("3 oz", "5 oz", "2 pack"), (7, 36),
      ("for face", "for kids", "for body")),
    T("hair dryer", "hair dryer", ("Beauty & Personal Care", "Hair Care", "Styling Tools & Appliances", "Hair Dryers"),
      ("ionic", "ceramic", "tourmaline", "compact", "travel", "professional"),
      ("fast drying", "low noise", "lightweight", "heat settings", "diffuser included", "frizz control"),
      {"color": ("black", "white", "pink", "rose gold", "purple")}, ("1875w", "1800 watt", "2000w"), (19, 140), ()),
    T("eye shadow palette", "eyeshadow palette", ("Beauty & Personal Care", "Makeup", "Eyes", "Eyeshadow"),
      ("shimmer", "matte", "glitter", "nude", "smoky", "neutral"),
      ("highly pigmented", "long lasting", "blendable", "cruelty free", "vegan", "waterproof"),
      {"color": ("warm nude", "cool tones", "rose", "smoky", "sunset", "bronze")}, ("12 colors", "18 colors", "35 colors"),
      (6, 54), ()),
)

FOOD = _types(
    "food",
    T("peanut butter", "peanut butter", ("Grocery & Gourmet Food", "Pantry Staples", "Jams, Jellies & Sweet Spreads", "Peanut Butter"),
      ("creamy", "crunchy", "natural", "powdered", "organic", "honey roasted"),
      ("gluten free", "non gmo", "no added sugar", "high protein", "keto friendly", "vegan", "low sodium"),
      {"flavor": ("creamy", "crunchy", "honey", "chocolate", "maple", "salted"), "size": "weight"},
      ("16 oz jar", "28 oz", "40 oz", "2 pack"), (4, 30), ()),
    T("protein bar", "protein bars", ("Grocery & Gourmet Food", "Snack Foods", "Bars", "Protein Bars"),
      ("whey", "plant based", "keto", "low carb", "chewy", "crispy"),
      ("high protein", "gluten free", "low sugar", "non gmo", "vegan", "soy free", "individually wrapped"),
      {"flavor": "flavor", "count": ("12 count", "15 count", "20 count", "24 count")}, ("12 count", "1.76 oz bars"), (12, 48), ()),
    T("coffee", "coffee", ("Grocery & Gourmet Food", "Beverages", "Coffee, Tea & Cocoa", "Coffee", "Ground Coffee"),
      ("dark roast", "medium roast", "light roast", "whole bean", "ground", "espresso", "decaf", "single origin"),
      ("fair trade", "organic", "low acid", "non gmo", "small batch", "kosher"),
      {"flavor": ("original", "hazelnut", "vanilla", "caramel", "mocha", "french roast"), "size": "weight"},
      ("12 oz bag", "2 lb", "32 oz"), (7, 42), ()),
    T("green tea", "green tea", ("Grocery & Gourmet Food", "Beverages", "Coffee, Tea & Cocoa", "Tea", "Green Tea"),
      ("matcha", "jasmine", "sencha", "loose leaf", "tea bags", "decaf"),
      ("organic", "caffeine free", "non gmo", "sugar free", "kosher", "antioxidant rich"),
      {"flavor": ("original", "lemon", "mint", "honey", "ginger", "peach"), "count": ("20 count", "40 count", "100 count")},
      ("100 tea bags", "4 oz tin", "pack of 6"), (5, 34), ()),
    T("olive oil", "olive oil", ("Grocery & Gourmet Food", "Pantry Staples", "Cooking & Baking", "Oils", "Olive Oil"),
      ("extra virgin", "cold pressed", "first cold pressed", "light", "greek", "italian"),
      ("non gmo", "kosher", "gluten free", "single origin", "high polyphenol", "glass bottle"),
      {"size": ("16.9 fl oz", "25.4 fl oz", "33.8 fl oz", "68 fl oz")}, ("500 ml", "1 liter", "2 pack"), (9, 52), ()),
    T("gummy candy", "gummy candy", ("Grocery & Gourmet Food", "Snacks & Sweets", "Candy & Chocolate", "Gummy Candy"),
      ("sour", "fruity", "vegan", "sugar free", "assorted", "worms"),
      ("gluten free", "fat free", "individually wrapped", "gelatin free", "kosher", "natural flavors"),
      {"flavor": ("assorted fruit", "sour cherry", "watermelon", "peach", "strawberry", "tropical"), "size": "weight"},
      ("5 lb bag", "2 pound", "12 pack"), (5, 32), ()),
    T("beef jerky", "beef jerky", ("Grocery & Gourmet Food", "Snack Foods", "Jerky & Dried Meats", "Beef Jerky"),
      ("original", "teriyaki", "peppered", "sweet and spicy", "grass fed", "smoked"),
      ("high protein", "gluten free", "low fat", "keto friendly", "no msg", "low sugar"),
      {"flavor": ("original", "teriyaki", "black pepper", "sweet and hot", "hickory smoked"), "size": ("2.85 oz", "8 oz", "10 oz", "16 oz")},
      ("3.25 oz", "10 oz bag", "pack of 4"), (6, 40), ()),
    T("pasta", "pasta", ("Grocery & Gourmet Food", "Pantry Staples", "Dried Grains & Rice", "Pasta & Noodles"),
      ("penne", "spaghetti", "fusilli", "whole wheat", "chickpea", "lentil", "bronze cut"),
      ("gluten free", "high protein", "non gmo", "organic", "vegan", "high fiber"),
      {"count": ("pack of 1", "pack of 4", "pack of 6", "pack of 12")}, ("16 oz box", "8 oz", "1 lb"), (3, 28), ()),
    T("granola", "granola", ("Grocery & Gourmet Food", "Breakfast Foods", "Cereals", "Granola"),
      ("crunchy", "clusters", "grain free", "oat", "almond", "paleo"),
      ("gluten free", "low sugar", "non gmo", "high fiber", "whole grain", "vegan"),
      {"flavor": ("honey almond", "maple pecan", "dark chocolate", "vanilla", "cinnamon", "mixed berry"), "size": "weight"},
      ("11 oz bag", "12 oz", "pack of 3"), (4, 26), ()),
    T("hot sauce", "hot sauce", ("Grocery & Gourmet Food", "Pantry Staples", "Condiments & Salad Dressings", "Hot Sauce"),
      ("habanero", "chipotle", "sriracha", "ghost pepper", "jalapeno", "garlic"),
      ("gluten free", "vegan", "no preservatives", "small batch", "low sodium", "sugar free"),
      {"flavor": ("original", "extra hot", "mild", "smoky", "garlic"), "count": "count"},
      ("5 fl oz", "12 oz bottle", "3 pack"), (4, 24), ()),
    T("dark chocolate", "dark chocolate", ("Grocery & Gourmet Food", "Snacks & Sweets", "Candy & Chocolate", "Chocolate Bars"),
      ("70% cacao", "85% cacao", "sea salt", "almond", "mint", "orange"),
      ("fair trade", "organic", "dairy free", "non gmo", "low sugar", "vegan", "gluten free"),
      {"flavor": ("original", "sea salt", "almond", "raspberry", "orange", "mint"), "count": ("pack of 3", "pack of 6", "pack of 12")},
      ("3.5 oz bar", "12 bars", "gift box"), (5, 45), ()),
    T("sparkling water", "sparkling water", ("Grocery & Gourmet Food", "Beverages", "Bottled Beverages, Water & Drink Mixes", "Sparkling Water"),
      ("lime", "grapefruit", "berry", "lemon", "mineral", "naturally flavored"),
      ("zero calories", "sugar free", "sodium free", "no artificial sweeteners", "caffeine free", "bpa free"),
      {"flavor": ("lime", "grapefruit", "black cherry", "lemon", "berry", "unflavored"), "count": ("pack of 8", "pack of 12", "pack of 24")},
      ("12 fl oz cans", "16.9 fl oz", "case of 24"), (6, 36), ()),
)

FASHION = _types(
    "fashion",
    T("women's running shoe", "women running shoes", ("Clothing, Shoes & Jewelry", "Women", "Shoes", "Athletic", "Running"),
      ("mesh", "lightweight", "knit", "trail", "cushioned", "slip on"),
      ("non slip", "breathable", "arch support", "memory foam", "rubber sole", "lightweight"),
      {"color": "color", "size": "shoe size"}, (), (25, 120), ("for walking", "for gym", "for tennis")),
    T("men's hiking boot", "men hiking boots", ("Clothing, Shoes & Jewelry", "Men", "Shoes", "Outdoor", "Hiking & Trekking"),
      ("leather", "suede", "waterproof", "mid", "insulated", "tactical"),
      ("waterproof", "non slip", "rubber sole", "ankle support", "breathable", "lace up"),
      {"color": ("brown", "black", "tan", "olive", "grey", "coyote"), "size": "shoe size"}, (), (40, 180), ("for trekking",)),
    T("women's jumpsuit", "women jumpsuits rompers overalls", ("Clothing, Shoes & Jewelry", "Women", "Clothing", "Jumpsuits, Rompers & Overalls"),
      ("wide leg", "sleeveless", "denim", "casual", "wrap", "linen"),
      ("machine wash", "high waist", "slim fit", "short sleeve", "polyester spandex", "daily wear", "button closure"),
      {"color": "color", "size": "apparel size"}, (), (18, 60), ("for summer",)),
    T("men's t-shirt", "men t shirts", ("Clothing, Shoes & Jewelry", "Men", "Clothing", "Shirts", "T-Shirts"),
      ("crew neck", "v neck", "cotton", "graphic", "slim fit", "pocket"),
      ("machine wash", "short sleeve", "regular fit", "cotton spandex", "moisture wicking", "tag free"),
      {"color": "color", "size": "apparel size"}, ("pack of 3", "5 pack"), (8, 40), ()),
    T("women's dress", "women dresses", ("Clothing, Shoes & Jewelry", "Women", "Clothing", "Dresses", "Casual"),
      ("maxi", "midi", "floral", "wrap", "bodycon", "swing", "ruffle"),
      ("machine wash", "long sleeve", "short sleeve", "v neck", "high waist", "loose fit", "daily wear"),
      {"color": "color", "size": "apparel size"}, (), (19, 75), ("for party", "for beach", "for work")),
    T("men's jeans", "men jeans", ("Clothing, Shoes & Jewelry", "Men", "Clothing", "Jeans"),
      ("straight leg", "slim fit", "relaxed fit", "stretch", "distressed", "bootcut"),
      ("machine wash", "button closure", "regular fit", "stretch fabric", "classic fit", "five pocket"),
      {"color": ("dark wash", "light wash", "black", "medium wash", "grey", "indigo"),
       "size": ("28w x 30l", "30w x 30l", "32w x 32l", "34w x 32l", "36w x 32l", "38w x 34l")}, (), (20, 80), ()),
    T("women's hoodie", "women hoodies sweatshirts", ("Clothing, Shoes & Jewelry", "Women", "Clothing", "Fashion Hoodies & Sweatshirts"),
      ("oversized", "cropped", "zip up", "fleece", "pullover", "tie dye"),
      ("long sleeve", "machine wash", "drawstring closure", "relaxed fit", "soft material", "kangaroo pocket"),
      {"color": "color", "size": "apparel size"}, (), (17, 55), ()),
    T("baby girl dress", "baby girl dresses", ("Clothing, Shoes & Jewelry", "Baby", "Baby Girls", "Clothing", "Dresses"),
      ("tutu", "floral", "lace", "princess", "cotton", "sleeveless"),
      ("machine wash", "soft material", "button closure", "short sleeve", "party wear"),
      {"color": ("pink", "white", "red", "yellow", "lavender", "mint green"), "size": "kids size"}, (), (10, 38), ()),
    T("leather wallet", "men wallets", ("Clothing, Shoes & Jewelry", "Men", "Accessories", "Wallets, Card Cases & Money Organizers", "Wallets"),
      ("genuine leather", "slim", "bifold", "trifold", "minimalist", "rfid blocking"),
      ("rfid blocking", "gift box", "slim design", "card holder", "genuine leather", "id window"),
      {"color": ("black", "brown", "tan", "dark brown", "navy blue", "grey")}, (), (9, 60), ("for men",)),
    T("sunglasses", "sunglasses", ("Clothing, Shoes & Jewelry", "Women", "Accessories", "Sunglasses & Eyewear Accessories", "Sunglasses"),
      ("polarized", "aviator", "cat eye", "oversized", "round", "square", "retro"),
      ("uv protection", "polarized lens", "lightweight", "metal frame", "scratch resistant"),
      {"color": ("black | grey", "tortoise | brown", "gold | green", "silver | blue", "clear | pink")}, (), (9, 90),
      ("for women", "for men", "for driving")),
    T("backpack", "backpack", ("Clothing, Shoes & Jewelry", "Luggage & Travel Gear", "Backpacks", "Casual Daypacks"),
      ("laptop", "travel", "canvas", "waterproof", "anti theft", "mini"),
      ("water resistant", "usb charging port", "laptop compartment", "lightweight", "large capacity", "padded straps"),
      {"color": "color"}, ("30l", "15.6 inch", "40 liter"), (18, 85), ("for school", "for travel", "for work")),
    T("women's leggings", "women leggings", ("Clothing, Shoes & Jewelry", "Women", "Clothing", "Leggings"),
      ("high waisted", "yoga", "fleece lined", "seamless", "capri", "workout"),
      ("high waist", "tummy control", "squat proof", "moisture wicking", "four way stretch", "machine wash"),
      {"color": "color", "size": "apparel size"}, ("pack of 2", "3 pack"), (12, 48), ("for yoga", "for running")),
    T("wrist watch", "watches", ("Clothing, Shoes & Jewelry", "Men", "Watches", "Wrist Watches"),
      ("analog", "digital", "chronograph", "minimalist", "dive", "automatic"),
      ("water resistant", "stainless steel", "quartz movement", "leather strap", "luminous hands", "date display"),
      {"color": ("black | silver", "blue | silver", "brown | gold", "black | gold", "white | rose gold")}, (), (19, 180),
      ("for men", "for women")),
)

FURNITURE = _types(
    "furniture",
    T("office chair", "office chair", ("Home & Kitchen", "Furniture", "Home Office Furniture", "Home Office Chairs", "Desk Chairs"),
      ("ergonomic", "mesh", "leather", "high back", "swivel", "gaming"),
      ("lumbar support", "height adjustable", "easy assemble", "adjustable armrests", "heavy duty", "breathable mesh"),
      {"color": ("black", "grey", "white", "blue", "pink", "brown")}, (), (60, 320), ("for home office",)),
    T("bookshelf", "bookshelf", ("Home & Kitchen", "Furniture", "Living Room Furniture", "Bookcases"),
      ("5 tier", "ladder", "corner", "industrial", "wooden", "cube"),
      ("easy assemble", "storage space", "solid wood", "wall mounted", "metal frame", "anti tip"),
      {"color": "wood finish"}, ("5 shelves", "71 inch", "4 cube"), (40, 260), ("for living room", "for bedroom")),
    T("coffee table", "coffee table", ("Home & Kitchen", "Furniture", "Living Room Furniture", "Tables", "Coffee Tables"),
      ("lift top", "round", "glass", "farmhouse", "mid century", "nesting"),
      ("storage space", "easy assemble", "solid wood", "metal legs", "tempered glass", "living room"),
      {"color": "wood finish"}, ("42 inch", "36 inch"), (50, 300), ("for living room",)),
    T("throw pillow cover", "throw pillow covers", ("Home & Kitchen", "Home Décor Products", "Decorative Pillows, Inserts & Covers", "Throw Pillow Covers"),
      ("velvet", "linen", "boho", "farmhouse", "faux fur", "striped"),
      ("machine wash", "hidden zipper", "soft material", "double sided", "living room", "pillow insert not included"),
      {"color": "color", "size": ("16x16 inch", "18x18 inch", "20x20 inch", "12x20 inch")}, ("set of 2", "set of 4"), (9, 35),
      ("for couch", "for sofa")),
    T("bed frame", "bed frame", ("Home & Kitchen", "Furniture", "Bedroom Furniture", "Beds, Frames & Bases", "Bed Frames"),
      ("metal", "platform", "upholstered", "wooden", "storage", "canopy"),
      ("easy assemble", "no box spring needed", "noise free", "under bed storage", "heavy duty", "wood slat support"),
      {"color": ("black", "white", "grey", "brown", "beige"), "size": "bed size"}, (), (90, 520), ()),
    T("area rug", "area rug", ("Home & Kitchen", "Home Décor Products", "Rugs, Pads & Protectors", "Area Rugs"),
      ("shag", "vintage", "geometric", "washable", "jute", "moroccan"),
      ("non slip", "machine washable", "stain resistant", "living room", "low pile", "pet friendly"),
      {"color": "color", "size": ("2x3 ft", "3x5 ft", "4x6 ft", "5x7 ft", "8x10 ft")}, (), (20, 240), ("for bedroom", "for living room")),
    T("curtains", "blackout curtains", ("Home & Kitchen", "Home Décor Products", "Window Treatments", "Curtains & Drapes", "Panels"),
      ("blackout", "sheer", "linen", "thermal", "grommet", "rod pocket"),
      ("room darkening", "thermal insulated", "machine wash", "noise reducing", "energy saving", "living room"),
      {"color": "color", "size": ("52x63 inch", "52x84 inch", "52x95 inch", "52x108 inch")}, ("2 panels", "set of 2"), (15, 70),
      ("for bedroom",)),
    T("dining chair", "dining chairs", ("Home & Kitchen", "Furniture", "Kitchen & Dining Room Furniture", "Chairs"),
      ("upholstered", "mid century", "velvet", "wooden", "farmhouse", "metal"),
      ("easy assemble", "solid wood", "padded seat", "heavy duty", "easy clean", "dining room"),
      {"color": ("grey", "beige", "green", "black", "navy blue", "cream"), "count": ("set of 2", "set of 4", "set of 6")}, (),
      (45, 350), ("for kitchen",)),
    T("storage ottoman", "storage ottoman", ("Home & Kitchen", "Furniture", "Living Room Furniture", "Ottomans"),
      ("folding", "tufted", "faux leather", "velvet", "round", "cube"),
      ("storage space", "easy assemble", "foldable", "padded seat", "living room", "sturdy"),
      {"color": ("black", "grey", "beige", "brown", "navy blue", "pink")}, ("30 inch", "15 inch"), (25, 140), ()),
    T("floor lamp", "floor lamp", ("Home & Kitchen", "Lighting & Ceiling Fans", "Lamps & Shades", "Floor Lamps"),
      ("arc", "tripod", "torchiere", "led", "industrial", "modern"),
      ("dimmable", "remote control", "energy saving", "easy assemble", "living room", "foot switch"),
      {"color": ("black", "gold", "white", "brass", "silver", "bronze")}, ("65 inch", "60 inch"), (30, 190), ("for living room",)),
    T("bath towel set", "bath towels", ("Home & Kitchen", "Bath", "Towels", "Bath Towels"),
      ("cotton", "turkish", "quick dry", "waffle", "bamboo", "luxury"),
      ("highly absorbent", "machine wash", "soft material", "quick dry", "hotel quality", "lint free"),
      {"color": "color", "count": ("set of 2", "set of 4", "set of 6", "set of 8")}, ("600 gsm", "27x54 inch"), (18, 80), ()),
    T("wall mirror", "wall mirror", ("Home & Kitchen", "Home Décor Products", "Mirrors", "Wall-Mounted Mirrors"),
      ("round", "arched", "full length", "rectangular", "sunburst", "framed"),
      ("wall mounted", "shatter proof", "easy install", "metal frame", "living room", "bathroom"),
      {"color": ("black", "gold", "silver", "white", "natural wood"), "size": ("20 inch", "24 inch", "30 inch", "36 inch")}, (),
      (25, 210), ("for bathroom", "for entryway")),
)

ELECTRONICS = _types(
    "electronics",
    T("wireless earbuds", "wireless earbuds", ("Electronics", "Headphones, Earbuds & Accessories", "Headphones", "Earbud Headphones"),
      ("bluetooth 5.3", "noise cancelling", "sport", "true wireless", "open ear", "mini"),
      ("noise cancelling", "long battery life", "water resistant", "built in microphone", "fast charging", "touch control"),
      {"color": ("black", "white", "navy blue", "pink", "green", "grey")}, ("with charging case",), (15, 160), ("for iphone and android",)),
    T("over ear headphones", "over ear headphones", ("Electronics", "Headphones, Earbuds & Accessories", "Headphones", "Over-Ear Headphones"),
      ("wireless", "studio", "noise cancelling", "foldable", "gaming", "hi-fi"),
      ("noise cancelling", "long battery life", "memory foam", "built in microphone", "foldable design", "deep bass"),
      {"color": ("black", "white", "silver", "blue", "rose gold", "midnight blue")}, (), (25, 300), ()),
    T("usb c cable", "usb c cable", ("Electronics", "Computers & Accessories", "Computer Accessories & Peripherals", "Cables & Accessories", "USB Cables"),
      ("braided", "fast charging", "right angle", "nylon", "100w", "usb c to usb c"),
      ("fast charging", "high speed", "durable", "data transfer", "tangle free", "usb c"),
      {"size": "length", "count": ("pack of 1", "pack of 2", "pack of 3", "pack of 5")}, (), (5, 26), ()),
    T("phone case", "iphone case", ("Electronics", "Cell Phones & Accessories", "Cases, Holsters & Sleeves", "Basic Cases"),
      ("clear", "silicone", "wallet", "rugged", "magnetic", "leather"),
      ("shockproof", "wireless charging", "slim design", "drop protection", "raised edges", "scratch resistant"),
      {"color": "color", "size": ("iphone 13", "iphone 14", "iphone 14 pro", "iphone 15", "iphone 15 pro max")}, (), (6, 40), ()),
    T("portable charger", "portable charger", ("Electronics", "Cell Phones & Accessories", "Chargers & Power Adapters", "Portable Power Banks"),
      ("10000mah", "20000mah", "solar", "slim", "magnetic", "usb c"),
      ("fast charging", "high capacity", "led display", "compact design", "dual output", "airline approved"),
      {"color": ("black", "white", "blue", "pink", "green")}, ("10000mah", "26800mah"), (15, 80), ("for iphone",)),
    T("bluetooth speaker", "bluetooth speaker", ("Electronics", "Portable Audio & Video", "Portable Speakers & Docks", "Portable Bluetooth Speakers"),
      ("portable", "waterproof", "mini", "outdoor", "party", "smart"),
      ("waterproof", "long battery life", "deep bass", "built in microphone", "stereo sound", "dustproof"),
      {"color": ("black", "blue", "red", "grey", "teal", "camouflage")}, ("20w", "40w"), (19, 180), ("for outdoor",)),
    T("memory card", "micro sd card", ("Electronics", "Computers & Accessories", "Data Storage", "Memory Cards", "Micro SD Cards"),
      ("micro sdxc", "high endurance", "a2", "u3", "class 10", "v30"),
      ("high speed", "4k video", "waterproof", "adapter included", "shock proof", "temperature proof"),
      {"capacity": "capacity", "count": ("pack of 1", "pack of 2", "pack of 5")}, (), (6, 90), ("for nintendo switch", "for dash cam")),
    T("hdmi cable", "hdmi cable", ("Electronics", "Television & Video", "Accessories", "Cables", "HDMI Cables"),
      ("8k", "4k", "braided", "high speed", "ultra slim", "fiber optic"),
      ("high speed", "gold plated", "ethernet", "durable", "4k hdr", "tangle free"),
      {"size": "length", "count": ("pack of 1", "pack of 2", "pack of 3")}, (), (6, 35), ()),
    T("wireless mouse", "wireless mouse", ("Electronics", "Computers & Accessories", "Computer Accessories & Peripherals", "Keyboards, Mice & Accessories", "Mice"),
      ("ergonomic", "silent", "rechargeable", "vertical", "bluetooth", "gaming"),
      ("ergonomic design", "silent click", "long battery life", "plug and play", "adjustable dpi", "rechargeable"),
      {"color": ("black", "white", "grey", "pink", "blue", "red")}, (), (9, 70), ("for laptop",)),
    T("smart watch", "smart watch", ("Electronics", "Wearable Technology", "Smartwatches"),
      ("fitness", "gps", "amoled", "sport", "rugged", "slim"),
      ("heart rate monitor", "water resistant", "sleep tracking", "long battery life", "step counter", "call notification"),
      {"color": ("black", "silver", "rose gold", "navy blue", "pink", "green")}, ("1.8 inch", "44mm"), (25, 250),
      ("for android and iphone",)),
    T("laptop stand", "laptop stand", ("Electronics", "Computers & Accessories", "Laptop Accessories", "Stands"),
      ("aluminum", "adjustable", "foldable", "portable", "ergonomic", "vertical"),
      ("height adjustable", "heat dissipation", "non slip", "portable", "sturdy", "ergonomic design"),
      {"color": ("silver", "space grey", "black", "rose gold")}, (), (14, 70), ("for desk",)),
    T("webcam", "webcam", ("Electronics", "Computers & Accessories", "Computer Accessories & Peripherals", "Webcams"),
      ("1080p", "4k", "wide angle", "autofocus", "streaming", "usb"),
      ("built in microphone", "plug and play", "privacy cover", "low light correction", "auto focus", "tripod ready"),
      {"color": ("black", "white")}, ("1080p", "60fps"), (19, 160), ("for video calls", "for streaming")),
)

#: the five top categories, each with its product types
CATEGORIES: dict[str, tuple[ProductType, ...]] = {
    "beauty": BEAUTY,
    "food": FOOD,
    "fashion": FASHION,
    "furniture": FURNITURE,
    "electronics": ELECTRONICS,
}

#: every product type, in a fixed order
PRODUCT_TYPES: tuple[ProductType, ...] = tuple(t for types in CATEGORIES.values() for t in types)

#: brand names are made of a head and a tail (``Lu`` + ``mora``) or of two words (``North Willow``)
BRAND_HEADS = (
    "Lu", "Ve", "Ka", "Or", "Sol", "Bri", "Mar", "Ti", "Zen", "Ar", "No", "Ela", "Qui", "Ro", "Sa", "Fen",
    "Da", "Il", "Ox", "Pe", "Cal", "Vio", "Nor", "Tal", "Bel", "Cor", "Ju", "Kin", "Lo", "Mo", "Ny", "Pra",
)
BRAND_TAILS = (
    "mora", "xo", "lia", "ven", "ora", "tix", "nex", "ando", "ria", "well", "stone", "craft", "leaf",
    "field", "ridge", "wave", "bloom", "peak", "lux", "vo", "ana", "ette", "ique", "sy", "ton",
)
BRAND_WORDS = (
    ("North", "Blue", "Silver", "Golden", "Urban", "Wild", "Pure", "Little", "Bright", "Evergreen", "Red",
     "Iron", "Happy", "Simple", "Coastal", "Velvet"),
    ("Willow", "Harbor", "Fox", "Oak", "Pine", "Sparrow", "Lane", "River", "Meadow", "Summit", "Bear",
     "Cove", "Home", "Goods", "Co", "Nest"),
)

#: sentences of descriptions and bullet points; ``{...}`` fields are filled per product
DESCRIPTION_OPENINGS = (
    "Meet the {brand} {name}: {descriptor} and made to last.",
    "The {brand} {name} is a {descriptor} choice for everyday use.",
    "Designed by {brand}, this {descriptor} {name} brings quality you can feel.",
    "Upgrade to the {descriptor} {name} from {brand}.",
    "{brand} built this {name} around one idea: {descriptor} done right.",
)
DESCRIPTION_MIDDLES = (
    "It is {attr1} and {attr2}, so it fits the way you live.",
    "Customers pick it because it is {attr1}; it is also {attr2}.",
    "Every unit is checked to be {attr1} and {attr2} before it ships.",
    "Expect something {attr1}, {attr2} and easy to love.",
)
DESCRIPTION_CLOSINGS = (
    "Backed by a 30-day satisfaction guarantee.",
    "A thoughtful gift for friends and family.",
    "Order today and see the difference.",
    "Questions? Our support team answers within one business day.",
    "",
)
BULLET_TEMPLATES = (
    "{ATTR}: {name_cap} that is {attr} from the first day",
    "{ATTR} - designed with care by {brand}",
    "WHAT YOU GET: {size_or_one} {name}, ready to use",
    "{ATTR} AND {ATTR2}: a {descriptor} {name} you can count on",
    "SATISFACTION: reach out any time and {brand} will make it right",
)
REVIEW_TEXT = {
    5: (("Love it!", "Exactly as described. The {name} is {attr} and I would buy it again."),
        ("Perfect", "Great quality for the price; really {attr}."),
        ("Five stars", "My second {name} from {brand}. Still impressed.")),
    4: (("Very good", "Works well and looks nice. Shipping took a bit long."),
        ("Happy with it", "Good {name}, {attr} as promised, minor flaws.")),
    3: (("It's okay", "Does the job but not as {attr} as I hoped."),
        ("Average", "Fine for the price. Nothing special.")),
    2: (("Disappointed", "The {name} stopped being {attr} after two weeks."),),
    1: (("Returned it", "Not what I expected at all."),),
}

#: how goals open, as WebShop's synthetic instructions do; ``{a}`` is "a" / "an" / "" before the product
GOAL_OPENINGS = (
    "i need {a}{attrs} {name}",
    "i am looking for {a}{name} that is {attrs}",
    "find me {a}{attrs} {name}",
    "i want to buy {a}{name} which is {attrs}",
    "i'm looking for {a}{attrs} {name}",
    "i would like {a}{attrs} {name}",
    "get me {a}{name} that is {attrs}",
    "i am shopping for {a}{attrs} {name}",
)
