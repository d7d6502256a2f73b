"""The models of tests/client/test_django.py: a small shop.

Publishers 1-n books, books n-n authors (Django's automatic through
table), books 1-n reviews; a composite index, a unique constraint over two
columns, decimals, dates (the JSON column is in ../djjson). migrations/0001_initial.py was
written by `django-admin makemigrations` from this file.
"""

from django.db import models


class Publisher(models.Model):
    name = models.CharField(max_length=50, unique=True)
    country = models.CharField(max_length=2, default="GB")

    class Meta:
        app_label = "djshop"


class Author(models.Model):
    name = models.CharField(max_length=50)
    born = models.IntegerField(null=True)

    class Meta:
        app_label = "djshop"
        indexes = [models.Index(fields=["name", "born"], name="author_name_born")]


class Book(models.Model):
    title = models.CharField(max_length=100, db_index=True)
    publisher = models.ForeignKey(Publisher, on_delete=models.CASCADE, related_name="books")
    authors = models.ManyToManyField(Author, related_name="books")
    price = models.DecimalField(max_digits=8, decimal_places=2)
    pages = models.PositiveIntegerField()
    pubdate = models.DateField()
    in_stock = models.BooleanField(default=True)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        app_label = "djshop"
        constraints = [
            models.UniqueConstraint(fields=["publisher", "title"], name="book_pub_title"),
        ]


class Review(models.Model):
    book = models.ForeignKey(Book, on_delete=models.CASCADE, related_name="reviews")
    stars = models.SmallIntegerField()
    text = models.TextField(blank=True, default="")

    class Meta:
        app_label = "djshop"
