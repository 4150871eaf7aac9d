"""Hosted, multi-tenant mode: tenants, projects and auth."""
