"""Movie: a generated film database (films, people, credits, companies, keywords, titles)."""
