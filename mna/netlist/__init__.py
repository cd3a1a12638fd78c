"""From text to cards: the lexer keeps places, the parser gives each line its fields."""
