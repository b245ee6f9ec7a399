"""Tether under what teams already run: LangGraph and MCP."""
