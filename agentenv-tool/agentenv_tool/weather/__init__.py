"""Weather: daily temperature, rain, snow and air quality of real cities, generated from a seed."""
