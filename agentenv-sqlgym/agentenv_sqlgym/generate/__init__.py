"""The generated task set: eight domains of sqlite databases with questions and gold SQL."""
