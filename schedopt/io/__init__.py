"""Reading and writing instances and solutions, and loaders for public trace formats."""

from .instance_json import dump, json_schema, load, load_solution, loads, parse_instance, to_json

__all__ = ["dump", "json_schema", "load", "load_solution", "loads", "parse_instance", "to_json"]
