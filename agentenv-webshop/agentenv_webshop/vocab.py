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
# fmt: off
OPTION_POOLS: dict[str, tuple[str, ...]] = {
    "color": (
        "black", "white", "navy blue", "grey", "charcoal", "beige", "brown", "red", "burgundy", "pink",
        "blush pink", "purple", "lavender", "blue", "light blue", "teal", "green", "olive green",
        "sage green", "yellow", "mustard", "orange", "coral", "khaki", "ivory", "silver", "gold", "rose gold",
        "multicolor", "black | white", "leopard", "camouflage",
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
    "wood finish": (
        "natural", "walnut", "espresso", "white oak", "rustic brown", "black", "grey wash", "cherry",
    ),
    "capacity": ("32gb", "64gb", "128gb", "256gb", "512gb", "1tb", "2tb"),
    "length": ("3 ft", "6 ft", "10 ft", "15 ft"),
    "weight": ("8 ounce", "12 ounce", "16 ounce", "1 pound", "2 pound", "5 pound"),
    "volume": ("1 fl oz", "2 fl oz", "3.4 fl oz", "8 fl oz", "12 fl oz", "16 fl oz", "33.8 fl oz"),
    "bed size": ("twin", "full", "queen", "king", "california king"),
    "style": ("modern", "classic", "vintage", "minimalist", "farmhouse", "boho", "industrial"),
}
# fmt: on


def _types(category: str, *types: ProductType) -> tuple[ProductType, ...]:
    return tuple(ProductType(**{**t.__dict__, "category": category}) for t in types)


T = ProductType

# fmt: off
BEAUTY = _types(
    "beauty",
    T(
        name="shampoo",
        query="shampoo",
        path=("Beauty & Personal Care", "Hair Care", "Shampoo & Conditioner", "Shampoos"),
        descriptors=(
            "argan oil", "tea tree", "biotin", "coconut milk", "charcoal", "rosemary mint", "keratin",
        ),
        attributes=(
            "sulfate free", "paraben free", "cruelty free", "natural ingredients", "dry hair", "hair growth",
            "color treated hair", "long lasting",
        ),
        options={
            "scent": "scent",
            "size": "volume",
        },
        sizes=("8 fl oz", "13.5 fl oz", "16 fl oz", "33.8 fl oz"),
        price=(6, 38),
        uses=("for dry damaged hair", "for thinning hair", "for curly hair", "for men and women"),
    ),
    T(
        name="hair extension",
        query="hair extensions",
        path=(
            "Beauty & Personal Care", "Hair Care", "Hair Extensions, Wigs & Accessories", "Extensions",
        ),
        descriptors=("clip in", "tape in", "human hair", "synthetic", "wavy", "straight", "ombre"),
        attributes=(
            "natural looking", "easy to use", "high quality", "long lasting", "heat resistant", "hair loss",
        ),
        options={
            "color": (
                "jet black", "natural black", "dark brown", "light brown", "ash blonde", "honey blonde",
                "platinum blonde", "auburn",
            ),
            "size": ("14 inch", "16 inch", "18 inch", "20 inch", "22 inch", "24 inch"),
        },
        sizes=("7 pieces", "10 pieces", "120 grams"),
        price=(12, 90),
        uses=("for women", "for thick hair"),
    ),
    T(
        name="face moisturizer",
        query="face moisturizer",
        path=(
            "Beauty & Personal Care", "Skin Care", "Face", "Creams & Moisturizers", "Face Moisturizers",
        ),
        descriptors=(
            "hyaluronic acid", "vitamin c", "retinol", "niacinamide", "oil free", "aloe vera", "ceramide",
        ),
        attributes=(
            "sensitive skin", "fine lines", "dark spots", "fragrance free", "non greasy", "dry skin",
            "anti aging", "dermatologist tested",
        ),
        options={
            "size": ("1 fl oz", "1.7 fl oz", "2.5 fl oz", "3.4 fl oz"),
        },
        sizes=("1.7 oz", "2 oz", "50 ml"),
        price=(9, 65),
        uses=("for oily skin", "for all skin types", "for day and night"),
    ),
    T(
        name="lipstick",
        query="lipstick",
        path=("Beauty & Personal Care", "Makeup", "Lips", "Lipstick"),
        descriptors=("matte", "satin", "liquid", "velvet", "glossy", "tinted"),
        attributes=("long lasting", "cruelty free", "highly pigmented", "non drying", "waterproof", "vegan"),
        options={
            "color": (
                "nude", "berry", "ruby red", "coral", "mauve", "rose", "plum", "classic red", "pink nude",
            ),
        },
        sizes=("0.12 oz", "0.15 oz", "3 count"),
        price=(5, 32),
        uses=("for women",),
    ),
    T(
        name="nail polish",
        query="nail polish",
        path=("Beauty & Personal Care", "Foot, Hand & Nail Care", "Nail Art & Polish", "Nail Polish"),
        descriptors=("gel", "quick dry", "glitter", "chrome", "pastel", "neon"),
        attributes=(
            "long lasting", "non toxic", "easy to use", "high gloss", "chip resistant", "salon quality",
        ),
        options={
            "color": "color",
            "count": ("1 count", "6 count", "12 count"),
        },
        sizes=("0.5 fl oz", "15 ml", "set of 6"),
        price=(4, 29),
    ),
    T(
        name="deodorant",
        query="deodorant",
        path=("Beauty & Personal Care", "Personal Care", "Deodorants & Antiperspirants", "Deodorant"),
        descriptors=("aluminum free", "natural", "clinical strength", "stick", "spray", "roll on"),
        attributes=(
            "sensitive skin", "long lasting", "aluminum free", "baking soda free", "paraben free", "24 hour",
        ),
        options={
            "scent": "scent",
            "count": "count",
        },
        sizes=("2.6 oz", "3 ounce", "2.7 oz"),
        price=(5, 24),
        uses=("for men", "for women"),
    ),
    T(
        name="makeup brush set",
        query="makeup brushes",
        path=("Beauty & Personal Care", "Tools & Accessories", "Makeup Brushes & Tools", "Brush Sets"),
        descriptors=("synthetic", "vegan", "kabuki", "professional", "travel", "bamboo"),
        attributes=(
            "easy to clean", "high quality", "soft bristles", "travel friendly", "cruelty free",
            "foundation brush",
        ),
        options={
            "color": ("black", "rose gold", "white", "pink", "champagne gold"),
            "count": ("10 pieces", "14 pieces", "18 pieces"),
        },
        sizes=("10 pcs", "15 pcs", "with case"),
        price=(8, 45),
        uses=("for foundation and powder",),
    ),
    T(
        name="perfume",
        query="perfume",
        path=("Beauty & Personal Care", "Fragrance", "Women's", "Eau de Parfum"),
        descriptors=("floral", "woody", "fresh", "oriental", "citrus", "musk"),
        attributes=("long lasting", "travel size", "gift set", "natural spray", "alcohol free"),
        options={
            "size": ("1 fl oz", "1.7 fl oz", "3.4 fl oz"),
        },
        sizes=("1.7 fl oz", "3.4 fl oz", "100 ml"),
        price=(15, 120),
        uses=("for women", "for men"),
    ),
    T(
        name="body wash",
        query="body wash",
        path=("Beauty & Personal Care", "Personal Care", "Bath & Bathing Accessories", "Body Washes"),
        descriptors=("moisturizing", "exfoliating", "shea butter", "oatmeal", "charcoal", "goat milk"),
        attributes=(
            "sensitive skin", "dry skin", "paraben free", "natural ingredients", "hypoallergenic",
            "sulfate free",
        ),
        options={
            "scent": "scent",
            "size": "volume",
        },
        sizes=("16 fl oz", "18 fl oz", "22 fl oz"),
        price=(5, 28),
        uses=("for men", "for women"),
    ),
    T(
        name="sunscreen",
        query="sunscreen",
        path=("Beauty & Personal Care", "Skin Care", "Sunscreens & Tanning Products", "Sunscreens"),
        descriptors=("mineral", "zinc oxide", "spf 30", "spf 50", "tinted", "sport"),
        attributes=(
            "water resistant", "reef safe", "broad spectrum", "oil free", "sensitive skin", "non greasy",
        ),
        options={
            "size": ("1.7 fl oz", "3 fl oz", "5 fl oz", "8 fl oz"),
        },
        sizes=("3 oz", "5 oz", "2 pack"),
        price=(7, 36),
        uses=("for face", "for kids", "for body"),
    ),
    T(
        name="hair dryer",
        query="hair dryer",
        path=("Beauty & Personal Care", "Hair Care", "Styling Tools & Appliances", "Hair Dryers"),
        descriptors=("ionic", "ceramic", "tourmaline", "compact", "travel", "professional"),
        attributes=(
            "fast drying", "low noise", "lightweight", "heat settings", "diffuser included", "frizz control",
        ),
        options={
            "color": ("black", "white", "pink", "rose gold", "purple"),
        },
        sizes=("1875w", "1800 watt", "2000w"),
        price=(19, 140),
    ),
    T(
        name="eye shadow palette",
        query="eyeshadow palette",
        path=("Beauty & Personal Care", "Makeup", "Eyes", "Eyeshadow"),
        descriptors=("shimmer", "matte", "glitter", "nude", "smoky", "neutral"),
        attributes=("highly pigmented", "long lasting", "blendable", "cruelty free", "vegan", "waterproof"),
        options={
            "color": ("warm nude", "cool tones", "rose", "smoky", "sunset", "bronze"),
        },
        sizes=("12 colors", "18 colors", "35 colors"),
        price=(6, 54),
    ),
)

FOOD = _types(
    "food",
    T(
        name="peanut butter",
        query="peanut butter",
        path=(
            "Grocery & Gourmet Food", "Pantry Staples", "Jams, Jellies & Sweet Spreads", "Peanut Butter",
        ),
        descriptors=("creamy", "crunchy", "natural", "powdered", "organic", "honey roasted"),
        attributes=(
            "gluten free", "non gmo", "no added sugar", "high protein", "keto friendly", "vegan",
            "low sodium",
        ),
        options={
            "flavor": ("creamy", "crunchy", "honey", "chocolate", "maple", "salted"),
            "size": "weight",
        },
        sizes=("16 oz jar", "28 oz", "40 oz", "2 pack"),
        price=(4, 30),
    ),
    T(
        name="protein bar",
        query="protein bars",
        path=("Grocery & Gourmet Food", "Snack Foods", "Bars", "Protein Bars"),
        descriptors=("whey", "plant based", "keto", "low carb", "chewy", "crispy"),
        attributes=(
            "high protein", "gluten free", "low sugar", "non gmo", "vegan", "soy free",
            "individually wrapped",
        ),
        options={
            "flavor": "flavor",
            "count": ("12 count", "15 count", "20 count", "24 count"),
        },
        sizes=("12 count", "1.76 oz bars"),
        price=(12, 48),
    ),
    T(
        name="coffee",
        query="coffee",
        path=("Grocery & Gourmet Food", "Beverages", "Coffee, Tea & Cocoa", "Coffee", "Ground Coffee"),
        descriptors=(
            "dark roast", "medium roast", "light roast", "whole bean", "ground", "espresso", "decaf",
            "single origin",
        ),
        attributes=("fair trade", "organic", "low acid", "non gmo", "small batch", "kosher"),
        options={
            "flavor": ("original", "hazelnut", "vanilla", "caramel", "mocha", "french roast"),
            "size": "weight",
        },
        sizes=("12 oz bag", "2 lb", "32 oz"),
        price=(7, 42),
    ),
    T(
        name="green tea",
        query="green tea",
        path=("Grocery & Gourmet Food", "Beverages", "Coffee, Tea & Cocoa", "Tea", "Green Tea"),
        descriptors=("matcha", "jasmine", "sencha", "loose leaf", "tea bags", "decaf"),
        attributes=("organic", "caffeine free", "non gmo", "sugar free", "kosher", "antioxidant rich"),
        options={
            "flavor": ("original", "lemon", "mint", "honey", "ginger", "peach"),
            "count": ("20 count", "40 count", "100 count"),
        },
        sizes=("100 tea bags", "4 oz tin", "pack of 6"),
        price=(5, 34),
    ),
    T(
        name="olive oil",
        query="olive oil",
        path=("Grocery & Gourmet Food", "Pantry Staples", "Cooking & Baking", "Oils", "Olive Oil"),
        descriptors=("extra virgin", "cold pressed", "first cold pressed", "light", "greek", "italian"),
        attributes=("non gmo", "kosher", "gluten free", "single origin", "high polyphenol", "glass bottle"),
        options={
            "size": ("16.9 fl oz", "25.4 fl oz", "33.8 fl oz", "68 fl oz"),
        },
        sizes=("500 ml", "1 liter", "2 pack"),
        price=(9, 52),
    ),
    T(
        name="gummy candy",
        query="gummy candy",
        path=("Grocery & Gourmet Food", "Snacks & Sweets", "Candy & Chocolate", "Gummy Candy"),
        descriptors=("sour", "fruity", "vegan", "sugar free", "assorted", "worms"),
        attributes=(
            "gluten free", "fat free", "individually wrapped", "gelatin free", "kosher", "natural flavors",
        ),
        options={
            "flavor": ("assorted fruit", "sour cherry", "watermelon", "peach", "strawberry", "tropical"),
            "size": "weight",
        },
        sizes=("5 lb bag", "2 pound", "12 pack"),
        price=(5, 32),
    ),
    T(
        name="beef jerky",
        query="beef jerky",
        path=("Grocery & Gourmet Food", "Snack Foods", "Jerky & Dried Meats", "Beef Jerky"),
        descriptors=("original", "teriyaki", "peppered", "sweet and spicy", "grass fed", "smoked"),
        attributes=("high protein", "gluten free", "low fat", "keto friendly", "no msg", "low sugar"),
        options={
            "flavor": ("original", "teriyaki", "black pepper", "sweet and hot", "hickory smoked"),
            "size": ("2.85 oz", "8 oz", "10 oz", "16 oz"),
        },
        sizes=("3.25 oz", "10 oz bag", "pack of 4"),
        price=(6, 40),
    ),
    T(
        name="pasta",
        query="pasta",
        path=("Grocery & Gourmet Food", "Pantry Staples", "Dried Grains & Rice", "Pasta & Noodles"),
        descriptors=("penne", "spaghetti", "fusilli", "whole wheat", "chickpea", "lentil", "bronze cut"),
        attributes=("gluten free", "high protein", "non gmo", "organic", "vegan", "high fiber"),
        options={
            "count": ("pack of 1", "pack of 4", "pack of 6", "pack of 12"),
        },
        sizes=("16 oz box", "8 oz", "1 lb"),
        price=(3, 28),
    ),
    T(
        name="granola",
        query="granola",
        path=("Grocery & Gourmet Food", "Breakfast Foods", "Cereals", "Granola"),
        descriptors=("crunchy", "clusters", "grain free", "oat", "almond", "paleo"),
        attributes=("gluten free", "low sugar", "non gmo", "high fiber", "whole grain", "vegan"),
        options={
            "flavor": (
                "honey almond", "maple pecan", "dark chocolate", "vanilla", "cinnamon", "mixed berry",
            ),
            "size": "weight",
        },
        sizes=("11 oz bag", "12 oz", "pack of 3"),
        price=(4, 26),
    ),
    T(
        name="hot sauce",
        query="hot sauce",
        path=("Grocery & Gourmet Food", "Pantry Staples", "Condiments & Salad Dressings", "Hot Sauce"),
        descriptors=("habanero", "chipotle", "sriracha", "ghost pepper", "jalapeno", "garlic"),
        attributes=("gluten free", "vegan", "no preservatives", "small batch", "low sodium", "sugar free"),
        options={
            "flavor": ("original", "extra hot", "mild", "smoky", "garlic"),
            "count": "count",
        },
        sizes=("5 fl oz", "12 oz bottle", "3 pack"),
        price=(4, 24),
    ),
    T(
        name="dark chocolate",
        query="dark chocolate",
        path=("Grocery & Gourmet Food", "Snacks & Sweets", "Candy & Chocolate", "Chocolate Bars"),
        descriptors=("70% cacao", "85% cacao", "sea salt", "almond", "mint", "orange"),
        attributes=("fair trade", "organic", "dairy free", "non gmo", "low sugar", "vegan", "gluten free"),
        options={
            "flavor": ("original", "sea salt", "almond", "raspberry", "orange", "mint"),
            "count": ("pack of 3", "pack of 6", "pack of 12"),
        },
        sizes=("3.5 oz bar", "12 bars", "gift box"),
        price=(5, 45),
    ),
    T(
        name="sparkling water",
        query="sparkling water",
        path=(
            "Grocery & Gourmet Food", "Beverages", "Bottled Beverages, Water & Drink Mixes",
            "Sparkling Water",
        ),
        descriptors=("lime", "grapefruit", "berry", "lemon", "mineral", "naturally flavored"),
        attributes=(
            "zero calories", "sugar free", "sodium free", "no artificial sweeteners", "caffeine free",
            "bpa free",
        ),
        options={
            "flavor": ("lime", "grapefruit", "black cherry", "lemon", "berry", "unflavored"),
            "count": ("pack of 8", "pack of 12", "pack of 24"),
        },
        sizes=("12 fl oz cans", "16.9 fl oz", "case of 24"),
        price=(6, 36),
    ),
)

FASHION = _types(
    "fashion",
    T(
        name="women's running shoe",
        query="women running shoes",
        path=("Clothing, Shoes & Jewelry", "Women", "Shoes", "Athletic", "Running"),
        descriptors=("mesh", "lightweight", "knit", "trail", "cushioned", "slip on"),
        attributes=("non slip", "breathable", "arch support", "memory foam", "rubber sole", "lightweight"),
        options={
            "color": "color",
            "size": "shoe size",
        },
        sizes=(),
        price=(25, 120),
        uses=("for walking", "for gym", "for tennis"),
    ),
    T(
        name="men's hiking boot",
        query="men hiking boots",
        path=("Clothing, Shoes & Jewelry", "Men", "Shoes", "Outdoor", "Hiking & Trekking"),
        descriptors=("leather", "suede", "waterproof", "mid", "insulated", "tactical"),
        attributes=("waterproof", "non slip", "rubber sole", "ankle support", "breathable", "lace up"),
        options={
            "color": ("brown", "black", "tan", "olive", "grey", "coyote"),
            "size": "shoe size",
        },
        sizes=(),
        price=(40, 180),
        uses=("for trekking",),
    ),
    T(
        name="women's jumpsuit",
        query="women jumpsuits rompers overalls",
        path=("Clothing, Shoes & Jewelry", "Women", "Clothing", "Jumpsuits, Rompers & Overalls"),
        descriptors=("wide leg", "sleeveless", "denim", "casual", "wrap", "linen"),
        attributes=(
            "machine wash", "high waist", "slim fit", "short sleeve", "polyester spandex", "daily wear",
            "button closure",
        ),
        options={
            "color": "color",
            "size": "apparel size",
        },
        sizes=(),
        price=(18, 60),
        uses=("for summer",),
    ),
    T(
        name="men's t-shirt",
        query="men t shirts",
        path=("Clothing, Shoes & Jewelry", "Men", "Clothing", "Shirts", "T-Shirts"),
        descriptors=("crew neck", "v neck", "cotton", "graphic", "slim fit", "pocket"),
        attributes=(
            "machine wash", "short sleeve", "regular fit", "cotton spandex", "moisture wicking", "tag free",
        ),
        options={
            "color": "color",
            "size": "apparel size",
        },
        sizes=("pack of 3", "5 pack"),
        price=(8, 40),
    ),
    T(
        name="women's dress",
        query="women dresses",
        path=("Clothing, Shoes & Jewelry", "Women", "Clothing", "Dresses", "Casual"),
        descriptors=("maxi", "midi", "floral", "wrap", "bodycon", "swing", "ruffle"),
        attributes=(
            "machine wash", "long sleeve", "short sleeve", "v neck", "high waist", "loose fit", "daily wear",
        ),
        options={
            "color": "color",
            "size": "apparel size",
        },
        sizes=(),
        price=(19, 75),
        uses=("for party", "for beach", "for work"),
    ),
    T(
        name="men's jeans",
        query="men jeans",
        path=("Clothing, Shoes & Jewelry", "Men", "Clothing", "Jeans"),
        descriptors=("straight leg", "slim fit", "relaxed fit", "stretch", "distressed", "bootcut"),
        attributes=(
            "machine wash", "button closure", "regular fit", "stretch fabric", "classic fit", "five pocket",
        ),
        options={
            "color": ("dark wash", "light wash", "black", "medium wash", "grey", "indigo"),
            "size": ("28w x 30l", "30w x 30l", "32w x 32l", "34w x 32l", "36w x 32l", "38w x 34l"),
        },
        sizes=(),
        price=(20, 80),
    ),
    T(
        name="women's hoodie",
        query="women hoodies sweatshirts",
        path=("Clothing, Shoes & Jewelry", "Women", "Clothing", "Fashion Hoodies & Sweatshirts"),
        descriptors=("oversized", "cropped", "zip up", "fleece", "pullover", "tie dye"),
        attributes=(
            "long sleeve", "machine wash", "drawstring closure", "relaxed fit", "soft material",
            "kangaroo pocket",
        ),
        options={
            "color": "color",
            "size": "apparel size",
        },
        sizes=(),
        price=(17, 55),
    ),
    T(
        name="baby girl dress",
        query="baby girl dresses",
        path=("Clothing, Shoes & Jewelry", "Baby", "Baby Girls", "Clothing", "Dresses"),
        descriptors=("tutu", "floral", "lace", "princess", "cotton", "sleeveless"),
        attributes=("machine wash", "soft material", "button closure", "short sleeve", "party wear"),
        options={
            "color": ("pink", "white", "red", "yellow", "lavender", "mint green"),
            "size": "kids size",
        },
        sizes=(),
        price=(10, 38),
    ),
    T(
        name="leather wallet",
        query="men wallets",
        path=(
            "Clothing, Shoes & Jewelry", "Men", "Accessories", "Wallets, Card Cases & Money Organizers",
            "Wallets",
        ),
        descriptors=("genuine leather", "slim", "bifold", "trifold", "minimalist", "rfid blocking"),
        attributes=(
            "rfid blocking", "gift box", "slim design", "card holder", "genuine leather", "id window",
        ),
        options={
            "color": ("black", "brown", "tan", "dark brown", "navy blue", "grey"),
        },
        sizes=(),
        price=(9, 60),
        uses=("for men",),
    ),
    T(
        name="sunglasses",
        query="sunglasses",
        path=(
            "Clothing, Shoes & Jewelry", "Women", "Accessories", "Sunglasses & Eyewear Accessories",
            "Sunglasses",
        ),
        descriptors=("polarized", "aviator", "cat eye", "oversized", "round", "square", "retro"),
        attributes=("uv protection", "polarized lens", "lightweight", "metal frame", "scratch resistant"),
        options={
            "color": ("black | grey", "tortoise | brown", "gold | green", "silver | blue", "clear | pink"),
        },
        sizes=(),
        price=(9, 90),
        uses=("for women", "for men", "for driving"),
    ),
    T(
        name="backpack",
        query="backpack",
        path=("Clothing, Shoes & Jewelry", "Luggage & Travel Gear", "Backpacks", "Casual Daypacks"),
        descriptors=("laptop", "travel", "canvas", "waterproof", "anti theft", "mini"),
        attributes=(
            "water resistant", "usb charging port", "laptop compartment", "lightweight", "large capacity",
            "padded straps",
        ),
        options={
            "color": "color",
        },
        sizes=("30l", "15.6 inch", "40 liter"),
        price=(18, 85),
        uses=("for school", "for travel", "for work"),
    ),
    T(
        name="women's leggings",
        query="women leggings",
        path=("Clothing, Shoes & Jewelry", "Women", "Clothing", "Leggings"),
        descriptors=("high waisted", "yoga", "fleece lined", "seamless", "capri", "workout"),
        attributes=(
            "high waist", "tummy control", "squat proof", "moisture wicking", "four way stretch",
            "machine wash",
        ),
        options={
            "color": "color",
            "size": "apparel size",
        },
        sizes=("pack of 2", "3 pack"),
        price=(12, 48),
        uses=("for yoga", "for running"),
    ),
    T(
        name="wrist watch",
        query="watches",
        path=("Clothing, Shoes & Jewelry", "Men", "Watches", "Wrist Watches"),
        descriptors=("analog", "digital", "chronograph", "minimalist", "dive", "automatic"),
        attributes=(
            "water resistant", "stainless steel", "quartz movement", "leather strap", "luminous hands",
            "date display",
        ),
        options={
            "color": (
                "black | silver", "blue | silver", "brown | gold", "black | gold", "white | rose gold",
            ),
        },
        sizes=(),
        price=(19, 180),
        uses=("for men", "for women"),
    ),
)

FURNITURE = _types(
    "furniture",
    T(
        name="office chair",
        query="office chair",
        path=(
            "Home & Kitchen", "Furniture", "Home Office Furniture", "Home Office Chairs", "Desk Chairs",
        ),
        descriptors=("ergonomic", "mesh", "leather", "high back", "swivel", "gaming"),
        attributes=(
            "lumbar support", "height adjustable", "easy assemble", "adjustable armrests", "heavy duty",
            "breathable mesh",
        ),
        options={
            "color": ("black", "grey", "white", "blue", "pink", "brown"),
        },
        sizes=(),
        price=(60, 320),
        uses=("for home office",),
    ),
    T(
        name="bookshelf",
        query="bookshelf",
        path=("Home & Kitchen", "Furniture", "Living Room Furniture", "Bookcases"),
        descriptors=("5 tier", "ladder", "corner", "industrial", "wooden", "cube"),
        attributes=(
            "easy assemble", "storage space", "solid wood", "wall mounted", "metal frame", "anti tip",
        ),
        options={
            "color": "wood finish",
        },
        sizes=("5 shelves", "71 inch", "4 cube"),
        price=(40, 260),
        uses=("for living room", "for bedroom"),
    ),
    T(
        name="coffee table",
        query="coffee table",
        path=("Home & Kitchen", "Furniture", "Living Room Furniture", "Tables", "Coffee Tables"),
        descriptors=("lift top", "round", "glass", "farmhouse", "mid century", "nesting"),
        attributes=(
            "storage space", "easy assemble", "solid wood", "metal legs", "tempered glass", "living room",
        ),
        options={
            "color": "wood finish",
        },
        sizes=("42 inch", "36 inch"),
        price=(50, 300),
        uses=("for living room",),
    ),
    T(
        name="throw pillow cover",
        query="throw pillow covers",
        path=(
            "Home & Kitchen", "Home Décor Products", "Decorative Pillows, Inserts & Covers",
            "Throw Pillow Covers",
        ),
        descriptors=("velvet", "linen", "boho", "farmhouse", "faux fur", "striped"),
        attributes=(
            "machine wash", "hidden zipper", "soft material", "double sided", "living room",
            "pillow insert not included",
        ),
        options={
            "color": "color",
            "size": ("16x16 inch", "18x18 inch", "20x20 inch", "12x20 inch"),
        },
        sizes=("set of 2", "set of 4"),
        price=(9, 35),
        uses=("for couch", "for sofa"),
    ),
    T(
        name="bed frame",
        query="bed frame",
        path=("Home & Kitchen", "Furniture", "Bedroom Furniture", "Beds, Frames & Bases", "Bed Frames"),
        descriptors=("metal", "platform", "upholstered", "wooden", "storage", "canopy"),
        attributes=(
            "easy assemble", "no box spring needed", "noise free", "under bed storage", "heavy duty",
            "wood slat support",
        ),
        options={
            "color": ("black", "white", "grey", "brown", "beige"),
            "size": "bed size",
        },
        sizes=(),
        price=(90, 520),
    ),
    T(
        name="area rug",
        query="area rug",
        path=("Home & Kitchen", "Home Décor Products", "Rugs, Pads & Protectors", "Area Rugs"),
        descriptors=("shag", "vintage", "geometric", "washable", "jute", "moroccan"),
        attributes=(
            "non slip", "machine washable", "stain resistant", "living room", "low pile", "pet friendly",
        ),
        options={
            "color": "color",
            "size": ("2x3 ft", "3x5 ft", "4x6 ft", "5x7 ft", "8x10 ft"),
        },
        sizes=(),
        price=(20, 240),
        uses=("for bedroom", "for living room"),
    ),
    T(
        name="curtains",
        query="blackout curtains",
        path=(
            "Home & Kitchen", "Home Décor Products", "Window Treatments", "Curtains & Drapes", "Panels",
        ),
        descriptors=("blackout", "sheer", "linen", "thermal", "grommet", "rod pocket"),
        attributes=(
            "room darkening", "thermal insulated", "machine wash", "noise reducing", "energy saving",
            "living room",
        ),
        options={
            "color": "color",
            "size": ("52x63 inch", "52x84 inch", "52x95 inch", "52x108 inch"),
        },
        sizes=("2 panels", "set of 2"),
        price=(15, 70),
        uses=("for bedroom",),
    ),
    T(
        name="dining chair",
        query="dining chairs",
        path=("Home & Kitchen", "Furniture", "Kitchen & Dining Room Furniture", "Chairs"),
        descriptors=("upholstered", "mid century", "velvet", "wooden", "farmhouse", "metal"),
        attributes=("easy assemble", "solid wood", "padded seat", "heavy duty", "easy clean", "dining room"),
        options={
            "color": ("grey", "beige", "green", "black", "navy blue", "cream"),
            "count": ("set of 2", "set of 4", "set of 6"),
        },
        sizes=(),
        price=(45, 350),
        uses=("for kitchen",),
    ),
    T(
        name="storage ottoman",
        query="storage ottoman",
        path=("Home & Kitchen", "Furniture", "Living Room Furniture", "Ottomans"),
        descriptors=("folding", "tufted", "faux leather", "velvet", "round", "cube"),
        attributes=("storage space", "easy assemble", "foldable", "padded seat", "living room", "sturdy"),
        options={
            "color": ("black", "grey", "beige", "brown", "navy blue", "pink"),
        },
        sizes=("30 inch", "15 inch"),
        price=(25, 140),
    ),
    T(
        name="floor lamp",
        query="floor lamp",
        path=("Home & Kitchen", "Lighting & Ceiling Fans", "Lamps & Shades", "Floor Lamps"),
        descriptors=("arc", "tripod", "torchiere", "led", "industrial", "modern"),
        attributes=(
            "dimmable", "remote control", "energy saving", "easy assemble", "living room", "foot switch",
        ),
        options={
            "color": ("black", "gold", "white", "brass", "silver", "bronze"),
        },
        sizes=("65 inch", "60 inch"),
        price=(30, 190),
        uses=("for living room",),
    ),
    T(
        name="bath towel set",
        query="bath towels",
        path=("Home & Kitchen", "Bath", "Towels", "Bath Towels"),
        descriptors=("cotton", "turkish", "quick dry", "waffle", "bamboo", "luxury"),
        attributes=(
            "highly absorbent", "machine wash", "soft material", "quick dry", "hotel quality", "lint free",
        ),
        options={
            "color": "color",
            "count": ("set of 2", "set of 4", "set of 6", "set of 8"),
        },
        sizes=("600 gsm", "27x54 inch"),
        price=(18, 80),
    ),
    T(
        name="wall mirror",
        query="wall mirror",
        path=("Home & Kitchen", "Home Décor Products", "Mirrors", "Wall-Mounted Mirrors"),
        descriptors=("round", "arched", "full length", "rectangular", "sunburst", "framed"),
        attributes=(
            "wall mounted", "shatter proof", "easy install", "metal frame", "living room", "bathroom",
        ),
        options={
            "color": ("black", "gold", "silver", "white", "natural wood"),
            "size": ("20 inch", "24 inch", "30 inch", "36 inch"),
        },
        sizes=(),
        price=(25, 210),
        uses=("for bathroom", "for entryway"),
    ),
)

ELECTRONICS = _types(
    "electronics",
    T(
        name="wireless earbuds",
        query="wireless earbuds",
        path=("Electronics", "Headphones, Earbuds & Accessories", "Headphones", "Earbud Headphones"),
        descriptors=("bluetooth 5.3", "noise cancelling", "sport", "true wireless", "open ear", "mini"),
        attributes=(
            "noise cancelling", "long battery life", "water resistant", "built in microphone",
            "fast charging", "touch control",
        ),
        options={
            "color": ("black", "white", "navy blue", "pink", "green", "grey"),
        },
        sizes=("with charging case",),
        price=(15, 160),
        uses=("for iphone and android",),
    ),
    T(
        name="over ear headphones",
        query="over ear headphones",
        path=("Electronics", "Headphones, Earbuds & Accessories", "Headphones", "Over-Ear Headphones"),
        descriptors=("wireless", "studio", "noise cancelling", "foldable", "gaming", "hi-fi"),
        attributes=(
            "noise cancelling", "long battery life", "memory foam", "built in microphone", "foldable design",
            "deep bass",
        ),
        options={
            "color": ("black", "white", "silver", "blue", "rose gold", "midnight blue"),
        },
        sizes=(),
        price=(25, 300),
    ),
    T(
        name="usb c cable",
        query="usb c cable",
        path=(
            "Electronics", "Computers & Accessories", "Computer Accessories & Peripherals",
            "Cables & Accessories", "USB Cables",
        ),
        descriptors=("braided", "fast charging", "right angle", "nylon", "100w", "usb c to usb c"),
        attributes=("fast charging", "high speed", "durable", "data transfer", "tangle free", "usb c"),
        options={
            "size": "length",
            "count": ("pack of 1", "pack of 2", "pack of 3", "pack of 5"),
        },
        sizes=(),
        price=(5, 26),
    ),
    T(
        name="phone case",
        query="iphone case",
        path=("Electronics", "Cell Phones & Accessories", "Cases, Holsters & Sleeves", "Basic Cases"),
        descriptors=("clear", "silicone", "wallet", "rugged", "magnetic", "leather"),
        attributes=(
            "shockproof", "wireless charging", "slim design", "drop protection", "raised edges",
            "scratch resistant",
        ),
        options={
            "color": "color",
            "size": ("iphone 13", "iphone 14", "iphone 14 pro", "iphone 15", "iphone 15 pro max"),
        },
        sizes=(),
        price=(6, 40),
    ),
    T(
        name="portable charger",
        query="portable charger",
        path=(
            "Electronics", "Cell Phones & Accessories", "Chargers & Power Adapters", "Portable Power Banks",
        ),
        descriptors=("10000mah", "20000mah", "solar", "slim", "magnetic", "usb c"),
        attributes=(
            "fast charging", "high capacity", "led display", "compact design", "dual output",
            "airline approved",
        ),
        options={
            "color": ("black", "white", "blue", "pink", "green"),
        },
        sizes=("10000mah", "26800mah"),
        price=(15, 80),
        uses=("for iphone",),
    ),
    T(
        name="bluetooth speaker",
        query="bluetooth speaker",
        path=(
            "Electronics", "Portable Audio & Video", "Portable Speakers & Docks",
            "Portable Bluetooth Speakers",
        ),
        descriptors=("portable", "waterproof", "mini", "outdoor", "party", "smart"),
        attributes=(
            "waterproof", "long battery life", "deep bass", "built in microphone", "stereo sound",
            "dustproof",
        ),
        options={
            "color": ("black", "blue", "red", "grey", "teal", "camouflage"),
        },
        sizes=("20w", "40w"),
        price=(19, 180),
        uses=("for outdoor",),
    ),
    T(
        name="memory card",
        query="micro sd card",
        path=(
            "Electronics", "Computers & Accessories", "Data Storage", "Memory Cards", "Micro SD Cards",
        ),
        descriptors=("micro sdxc", "high endurance", "a2", "u3", "class 10", "v30"),
        attributes=(
            "high speed", "4k video", "waterproof", "adapter included", "shock proof", "temperature proof",
        ),
        options={
            "capacity": "capacity",
            "count": ("pack of 1", "pack of 2", "pack of 5"),
        },
        sizes=(),
        price=(6, 90),
        uses=("for nintendo switch", "for dash cam"),
    ),
    T(
        name="hdmi cable",
        query="hdmi cable",
        path=("Electronics", "Television & Video", "Accessories", "Cables", "HDMI Cables"),
        descriptors=("8k", "4k", "braided", "high speed", "ultra slim", "fiber optic"),
        attributes=("high speed", "gold plated", "ethernet", "durable", "4k hdr", "tangle free"),
        options={
            "size": "length",
            "count": ("pack of 1", "pack of 2", "pack of 3"),
        },
        sizes=(),
        price=(6, 35),
    ),
    T(
        name="wireless mouse",
        query="wireless mouse",
        path=(
            "Electronics", "Computers & Accessories", "Computer Accessories & Peripherals",
            "Keyboards, Mice & Accessories", "Mice",
        ),
        descriptors=("ergonomic", "silent", "rechargeable", "vertical", "bluetooth", "gaming"),
        attributes=(
            "ergonomic design", "silent click", "long battery life", "plug and play", "adjustable dpi",
            "rechargeable",
        ),
        options={
            "color": ("black", "white", "grey", "pink", "blue", "red"),
        },
        sizes=(),
        price=(9, 70),
        uses=("for laptop",),
    ),
    T(
        name="smart watch",
        query="smart watch",
        path=("Electronics", "Wearable Technology", "Smartwatches"),
        descriptors=("fitness", "gps", "amoled", "sport", "rugged", "slim"),
        attributes=(
            "heart rate monitor", "water resistant", "sleep tracking", "long battery life", "step counter",
            "call notification",
        ),
        options={
            "color": ("black", "silver", "rose gold", "navy blue", "pink", "green"),
        },
        sizes=("1.8 inch", "44mm"),
        price=(25, 250),
        uses=("for android and iphone",),
    ),
    T(
        name="laptop stand",
        query="laptop stand",
        path=("Electronics", "Computers & Accessories", "Laptop Accessories", "Stands"),
        descriptors=("aluminum", "adjustable", "foldable", "portable", "ergonomic", "vertical"),
        attributes=(
            "height adjustable", "heat dissipation", "non slip", "portable", "sturdy", "ergonomic design",
        ),
        options={
            "color": ("silver", "space grey", "black", "rose gold"),
        },
        sizes=(),
        price=(14, 70),
        uses=("for desk",),
    ),
    T(
        name="webcam",
        query="webcam",
        path=(
            "Electronics", "Computers & Accessories", "Computer Accessories & Peripherals", "Webcams",
        ),
        descriptors=("1080p", "4k", "wide angle", "autofocus", "streaming", "usb"),
        attributes=(
            "built in microphone", "plug and play", "privacy cover", "low light correction", "auto focus",
            "tripod ready",
        ),
        options={
            "color": ("black", "white"),
        },
        sizes=("1080p", "60fps"),
        price=(19, 160),
        uses=("for video calls", "for streaming"),
    ),
)
# fmt: on

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
    "Lu",
    "Ve",
    "Ka",
    "Or",
    "Sol",
    "Bri",
    "Mar",
    "Ti",
    "Zen",
    "Ar",
    "No",
    "Ela",
    "Qui",
    "Ro",
    "Sa",
    "Fen",
    "Da",
    "Il",
    "Ox",
    "Pe",
    "Cal",
    "Vio",
    "Nor",
    "Tal",
    "Bel",
    "Cor",
    "Ju",
    "Kin",
    "Lo",
    "Mo",
    "Ny",
    "Pra",
)
BRAND_TAILS = (
    "mora",
    "xo",
    "lia",
    "ven",
    "ora",
    "tix",
    "nex",
    "ando",
    "ria",
    "well",
    "stone",
    "craft",
    "leaf",
    "field",
    "ridge",
    "wave",
    "bloom",
    "peak",
    "lux",
    "vo",
    "ana",
    "ette",
    "ique",
    "sy",
    "ton",
)
BRAND_WORDS = (
    (
        "North",
        "Blue",
        "Silver",
        "Golden",
        "Urban",
        "Wild",
        "Pure",
        "Little",
        "Bright",
        "Evergreen",
        "Red",
        "Iron",
        "Happy",
        "Simple",
        "Coastal",
        "Velvet",
    ),
    (
        "Willow",
        "Harbor",
        "Fox",
        "Oak",
        "Pine",
        "Sparrow",
        "Lane",
        "River",
        "Meadow",
        "Summit",
        "Bear",
        "Cove",
        "Home",
        "Goods",
        "Co",
        "Nest",
    ),
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
    5: (
        ("Love it!", "Exactly as described. The {name} is {attr} and I would buy it again."),
        ("Perfect", "Great quality for the price; really {attr}."),
        ("Five stars", "My second {name} from {brand}. Still impressed."),
    ),
    4: (
        ("Very good", "Works well and looks nice. Shipping took a bit long."),
        ("Happy with it", "Good {name}, {attr} as promised, minor flaws."),
    ),
    3: (
        ("It's okay", "Does the job but not as {attr} as I hoped."),
        ("Average", "Fine for the price. Nothing special."),
    ),
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
