"""From text to a circuit: the lexer keeps places, the parser gives each line its fields,
elaboration flattens and checks."""
