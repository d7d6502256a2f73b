"""A JSONField model for tests/client/test_django.py, in an app of its own
so that djshop's schema does not depend on the JSON column type.
migrations/0001_initial.py was written by `django-admin makemigrations`."""

from django.db import models


class Profile(models.Model):
    name = models.CharField(max_length=20)
    meta = models.JSONField(default=dict)

    class Meta:
        app_label = "djjson"
