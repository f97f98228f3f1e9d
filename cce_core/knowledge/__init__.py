"""Knowledge sources: curated documents (runbooks, design notes, tickets) as a second corpus beside code."""
